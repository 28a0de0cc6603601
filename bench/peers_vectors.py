"""Vector search: kbase's exact 4-bit scan (`index.vectors.Vectors`, what the index ships)
against exact float32 numpy search and usearch's HNSW index (f16, the obvious ANN
library) on the same vectors: an index's chunk embeddings, all shards in one matrix,
queried with embedded note titles. recall@10 is the overlap with the exact float32 top
10 over the stored vectors."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# usearch as kbase used it before the integer formats, and as a user would configure it.
USEARCH: dict[str, Any] = {"metric": "cos", "dtype": "f16", "connectivity": 16,
                           "expansion_add": 128, "expansion_search": 64}


def stored(index_dir: Path) -> Any:
    """The stored rows (as int8 values) of every shard that have a vector, stacked."""
    import numpy as np

    from kbase_ci.index.reader import open_index
    from kbase_ci.index.vectorfile import unpack

    reader = open_index(index_dir)
    parts = [unpack(v.packed, v.ndim)[v.rows] for v in (reader.vectors(s) for s in reader.shards)
             if v is not None and len(v)]
    if not parts:
        raise RuntimeError(f"{index_dir} has no vectors")
    return np.vstack(parts)


def measure(index_dir: Path, model: Path, titles: list[str], workload: str
            ) -> list[dict[str, Any]]:
    import numpy as np

    from kbase_ci.index.shardbuild import embedder_for
    from kbase_ci.index.vectorfile import pack
    from kbase_ci.index.vectors import Vectors

    raw = stored(index_dir)
    unit = raw.astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    queries = np.asarray(embedder_for(model, int(raw.shape[1])).encode(titles),
                         dtype=np.float32)
    keys = np.arange(len(unit), dtype=np.uint64)
    exacts: list[set[int]] = []
    exact_t: list[float] = []
    for q in queries:
        t0 = time.perf_counter()
        scores = unit @ (q / max(float(np.linalg.norm(q)), 1e-12))
        top = np.argpartition(-scores, 10)[:10]
        exacts.append(set(top.tolist()))
        exact_t.append(time.perf_counter() - t0)
    kb = Vectors(pack(raw), int(raw.shape[1]))
    Index = _usearch_index()
    w = f"{workload} ({len(raw)} vectors x {raw.shape[1]} dims, {len(queries)} queries)"
    rows = [_fig(w, "exact numpy, float32 (reference)", (exact_t, 1.0)),
            _fig(w, "kbase: exact scan of the 4-bit matrix (what the index ships)",
                 _run(queries, exacts, lambda q: kb.search(q, 10)))]
    if Index is None:
        return rows
    t0 = time.perf_counter()
    hnsw = Index(ndim=int(raw.shape[1]), **USEARCH)
    hnsw.add(keys, unit.astype(np.float16), threads=1)
    build = time.perf_counter() - t0

    ef = int(USEARCH["expansion_search"])
    rows.append(_fig(w, f"usearch HNSW f16 (M=16, ef={ef})",
                     _run(queries, exacts, lambda q: hnsw.search(q.astype(np.float16), 10)),
                     build_s=round(build, 2)))
    setattr(hnsw, "expansion_search", 4 * ef)  # noqa: B010 - typed read-only, settable
    rows.append(_fig(w, f"usearch HNSW f16, ef={4 * ef} (same graph)",
                     _run(queries, exacts, lambda q: hnsw.search(q.astype(np.float16), 10))))
    return rows


def _run(queries: Any, exacts: list[set[int]], search: Callable[[Any], Any]
         ) -> tuple[list[float], float]:
    times: list[float] = []
    overlap: list[float] = []
    for q, exact in zip(queries, exacts, strict=True):
        t0 = time.perf_counter()
        found = search(q)
        times.append(time.perf_counter() - t0)
        overlap.append(len(exact & {int(k) for k in found.keys.tolist()}) / 10)
    return times, statistics.fmean(overlap)


def _fig(w: str, name: str, got: tuple[list[float], float], **extra: Any) -> dict[str, Any]:
    times, recall = got
    return {"name": name, "workload": w, "unit": "ms", "n": len(times),
            "median": round(statistics.median(times) * 1000, 3),
            "min": round(min(times) * 1000, 3), "max": round(max(times) * 1000, 3),
            "cpu": None, "recall@10": round(recall, 4),
            "command": "bench.peers_vectors.measure (in-process, one query at a time)",
            **extra}


def _usearch_index() -> Any:
    """usearch's Index class, or None: the bench extra installs it; kbase no longer does."""
    try:
        from usearch.index import Index
    except ImportError:
        return None
    return Index
