"""usearch HNSW against kbase's exact scan, on an index's own vectors:
`python -m bench.ann INDEX_DIR --model FOLDER --queries FILE.jsonl [--sizes 5000,20000]`.

Why the suite once measured 31% recall@10 for HNSW, and what fixes it. The vectors are
each shard's stored rows (4-bit, read back at unit length), all shards stacked; queries
are the `query` texts of a qa file embedded with the index's model; recall@10 is the
share of the exact top 10 (by cosine over the same stored rows) that HNSW returns, ties
at the 10th score counted as found. Printed per configuration: metric (cosine on the
rows, or inner product on the rows minus their mean), dtype, connectivity (M),
expansion_search (ef), recall, milliseconds per query, bytes per vector. Then, per
matrix size, the exact scan (one-shot: from the packed rows; warm: from cached float32
rows) against HNSW (memory-mapped file) — the crossover `kbase_ci.index.ann` uses.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


def stacked(index_dir: Path) -> tuple[Any, int]:
    """(packed rows of every shard that have a vector, dim)."""
    import numpy as np

    from kbase_ci.index.reader import open_index

    reader = open_index(index_dir)
    dim = int(reader.manifest.embeddings.dim or 0)
    parts = [np.asarray(v.packed)[v.rows] for v in (reader.vectors(s) for s in reader.shards)
             if v is not None and len(v)]
    return np.vstack(parts), dim


def queries(path: Path, model: Path, dim: int, limit: int) -> Any:
    import numpy as np

    from kbase_ci.index.modelfolder import open_embedder

    texts = [json.loads(x)["query"] for x in path.read_text(encoding="utf-8").splitlines()
             if x.strip()][:limit]
    got = open_embedder(model, dim).encode(texts, query=True)
    return np.asarray(got, dtype=np.float32)


def recall(found: list[Any], sims: Any, k: int = 10) -> float:
    import numpy as np

    kth = -np.sort(-sims, axis=1)[:, k - 1]
    return statistics.fmean(
        float(np.sum(s[np.asarray(f, dtype=np.int64)] >= t - 1e-6)) / k
        for f, s, t in zip(found, sims, kth, strict=True))


CHOSEN = (("cos", "f16", 16), ("ip-centred", "f16", 32))
"""`--configs chosen`: what the suite measured before, and what kbase_ci.index.ann uses."""


def configs(packed: Any, dim: int, qs: Any, only: tuple[tuple[str, str, int], ...] | None
            = None) -> None:
    import numpy as np
    from usearch.index import Index

    from kbase_ci.index.vectors import Vectors

    unit = Vectors(packed, dim).unit_rows()
    sims = qs @ unit.T
    mean = unit.mean(axis=0)
    print(f"{len(unit)} vectors x {dim} dims, {len(qs)} queries; mean cosine of a row to "
          f"the centroid {float((unit @ (mean / np.linalg.norm(mean))).mean()):.3f}, of a "
          f"query {float((qs @ (mean / np.linalg.norm(mean))).mean()):.3f}")
    keys = np.arange(len(unit), dtype=np.uint64)
    for metric, data in (("cos", unit), ("ip-centred", unit - mean)):
        for dtype in ("f16", "i8"):
            for m in (16, 32):
                if only is not None and (metric, dtype, m) not in only:
                    continue
                vecs = data * (1.0 / float(np.abs(data).max())) if dtype == "i8" else data
                idx = Index(ndim=dim, metric="cos" if metric == "cos" else "ip", dtype=dtype,
                            connectivity=m, expansion_add=128)
                t0 = time.perf_counter()
                idx.add(keys, vecs.astype(np.float32), threads=1)
                build = time.perf_counter() - t0
                size = len(idx.save()) / len(unit)
                for ef in (64, 128, 256, 512):
                    idx.expansion_search = ef
                    t0 = time.perf_counter()
                    found = [idx.search(q, 10).keys for q in qs]
                    ms = (time.perf_counter() - t0) * 1000 / len(qs)
                    print(f"{metric:10} {dtype:3} M={m:<2} ef={ef:<3} recall@10 "
                          f"{recall(found, sims):.3f} {ms:.3f} ms/query {size:.0f} B/vector "
                          f"build {build:.1f} s", flush=True)


def crossover(packed: Any, dim: int, qs: Any, sizes: list[int]) -> None:
    import numpy as np

    from kbase_ci.index.vectors import Vectors

    for n in sizes:
        if n > len(packed):
            break
        part = np.ascontiguousarray(packed[:n])
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "v.usearch"
            data, same_bytes = Vectors(part, dim).graph_files()
            path.write_bytes(data)
            (Path(tmp) / "same.npy").write_bytes(same_bytes)
            same = np.load(Path(tmp) / "same.npy")
            one_shot, warm, graph_cold, graph_warm = [], [], [], []
            cached = Vectors(part, dim)
            cached.unit_rows()
            graph = Vectors(part, dim, (path, same))
            for q in qs:
                t0 = time.perf_counter()
                Vectors(part, dim).search(q, 100)
                one_shot.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                cached.search(q, 100)
                warm.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                Vectors(part, dim, (path, same)).search(q, 100)
                graph_cold.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                graph.search(q, 100)
                graph_warm.append(time.perf_counter() - t0)
            found = [graph.search(q, 10).keys for q in qs]
            sims = qs @ cached.unit_rows().T
            print(f"n={n:>7}: exact one-shot {1000 * statistics.median(one_shot):.2f} ms, "
                  f"exact warm {1000 * statistics.median(warm):.2f} ms, HNSW open+search "
                  f"{1000 * statistics.median(graph_cold):.2f} ms, HNSW warm "
                  f"{1000 * statistics.median(graph_warm):.2f} ms, recall@10 "
                  f"{recall(found, sims):.3f}, file {path.stat().st_size / n:.0f} B/vector"
                  if path.exists() else "", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("index", type=Path)
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--sizes", default="2000,5000,10000,20000,50000,100000,200000")
    ap.add_argument("--skip-configs", action="store_true")
    ap.add_argument("--configs", choices=("all", "chosen"), default="all")
    ap.add_argument("--rows", type=int, default=0,
                    help="use every k-th row so that about this many remain (0: all)")
    args = ap.parse_args()
    packed, dim = stacked(args.index)
    if args.rows and len(packed) > args.rows:
        packed = packed[::len(packed) // args.rows]
    qs = queries(args.queries, args.model, dim, args.limit)
    if not args.skip_configs:
        configs(packed, dim, qs, CHOSEN if args.configs == "chosen" else None)
    crossover(packed, dim, qs, [int(x) for x in args.sizes.split(",")])


if __name__ == "__main__":
    main()
