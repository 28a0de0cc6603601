"""Approximate search for large shards: a usearch HNSW graph (`vectors.usearch`) over a
shard's stored vectors, whose candidates are rescored exactly from `vectors.npy`.

Why the suite measured 31% recall@10 (bench/ann.py, docs/index-format.md): embeddings
fill a narrow cone (on the generated vault a chunk's mean cosine to the centroid of all
chunks is 0.90) while a query sits far outside it (0.32). Every chunk then looks almost
equally far from the query and the greedy walk over a cosine graph stops early: 0.21 at
expansion_search 64, 0.49 at 512. Ranking by the inner product with the rows *minus
their mean* is the same ranking (q.(x - m) = q.x - q.m, and q.m is the same for every
row of unit length x), but the centred rows spread out and the walk finds its way: 0.75
at 64, 0.96 with connectivity 32 and expansion_search 256 (int8, 256 dims).

The graph is built with one thread, so its bytes depend only on the rows (two builds
give the same file); it is read memory-mapped with usearch's own loader, after its
sha256 and header were checked (never unpickled). Scores are always exact cosines of the
stored rows, so a shard searched by graph or by scan ranks the same rows the same way;
only a row the walk misses can differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.errors import IndexFormatError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

FILE = "vectors.usearch"
MIN_ROWS = 30_000
"""Shards with at least this many vectors get a graph (the crossover, bench/ann.py)."""
PARAMS: dict[str, Any] = {"library": "usearch", "file": FILE, "min_rows": MIN_ROWS,
                          "metric": "ip on rows minus their mean", "dtype": "f16",
                          "connectivity": 32, "expansion_add": 128, "expansion_search": 256,
                          "threads": 1, "keys": "chunk number"}


def build(packed: npt.NDArray[np.uint8], dim: int) -> bytes:
    """The graph file of a shard's packed rows (`vectors.pack`); zero rows are left out."""
    import numpy as np
    from usearch.index import Index

    from kbase_ci.index.vectors import Vectors

    vecs = Vectors(packed, dim)
    rows = vecs.rows
    unit = vecs.unit_rows()[rows].astype(np.float64)
    centred = unit - unit.mean(axis=0)
    index = Index(ndim=dim, metric="ip", dtype=PARAMS["dtype"],
                  connectivity=PARAMS["connectivity"], expansion_add=PARAMS["expansion_add"])
    index.add(rows.astype(np.uint64), centred.astype(np.float32), threads=1)
    data = index.save()
    assert data is not None  # no path given: the bytes come back
    return bytes(data)


@dataclass(frozen=True)
class Found:
    keys: npt.NDArray[np.uint64]
    distances: npt.NDArray[np.float32]


class Graph:
    """A shard's graph, memory-mapped (state: the usearch index and the shard's rows)."""

    def __init__(self, path: Path, packed: npt.NDArray[np.uint8], dim: int) -> None:
        from usearch.index import Index

        from kbase_ci.index.vectors import Vectors

        self.vectors = Vectors(packed, dim)
        try:
            meta = Index.metadata(str(path))
        except (ValueError, RuntimeError):  # usearch's words for "not an index file"
            meta = None
        # The file's bytes match the manifest, but the manifest is data too: check that
        # the header describes this shard before usearch maps it.
        if not meta or meta.get("dimensions") != dim or \
                int(meta.get("count_present", -1)) > len(packed) or \
                str(meta.get("kind_metric")).lower().rsplit(".", 1)[-1] != "ip":
            raise IndexFormatError(f"{path}: not the vector graph of this shard")
        index = Index(ndim=dim, metric="ip", dtype=PARAMS["dtype"],
                      connectivity=PARAMS["connectivity"],
                      expansion_search=PARAMS["expansion_search"])
        index.view(str(path))
        self.index = index

    def search(self, query: npt.NDArray[Any], k: int) -> Found:
        """The `k` best rows the graph walk finds, by exact cosine of the stored rows
        (ties: lower chunk number first)."""
        import numpy as np

        q = np.asarray(query, dtype=np.float32)
        qn = float(np.linalg.norm(q))
        if qn == 0 or k <= 0 or not len(self.index):
            return Found(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.float32))
        keys = np.sort(np.asarray(self.index.search(q / qn, k, threads=1).keys,
                                  dtype=np.int64))
        keys = keys[(keys >= 0) & (keys < len(self.vectors.packed))]
        sims = self.vectors.rows_cosine(keys, q / qn)
        order = np.argsort(-sims, kind="stable")
        return Found(keys[order].astype(np.uint64), (1.0 - sims[order]).astype(np.float32))
