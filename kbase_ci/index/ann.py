"""Approximate search for large shards: a usearch HNSW graph (`vectors.usearch`) over a
shard's stored vectors, whose candidates are rescored exactly from `vectors.npy`.

Why the suite measured 31% recall@10 (bench/ann.py, docs/index-format.md): embeddings
fill a narrow cone (on the generated vault a chunk's mean cosine to the centroid of all
chunks is 0.90) while a query sits far outside it (0.32). Every chunk then looks almost
equally far from the query and the greedy walk over a cosine graph stops early: 0.21 at
expansion_search 64, 0.49 at 512. Ranking by the inner product with the rows *minus
their mean* is the same ranking (q.(x - m) = q.x - q.m, and q.m is the same for every
row of unit length x), but the centred rows spread out and the walk finds its way: 0.75
at 64, 0.96 with connectivity 32 and expansion_search 256 (f16, 256 dims).

Paragraph chunks bring a second trap: thousands of identical rows (every `## Overview`
heading chunk of the generated vault embeds alike). Identical points crowd each other's
neighbour lists and cut the graph apart: on 50k of its paragraph rows (42.7k distinct)
the centred graph found 0.55. So the graph holds each distinct row once (its first
chunk) and `vectors.same.npy` maps every row to that one; with expansion_add 256 instead
of 128 the same rows reach 0.957 at expansion_search 256 (tldr paragraphs: 0.98).

The graph is built with one thread, so its bytes depend only on the rows (two builds
give the same file); it is read memory-mapped with usearch's own loader, after its
sha256 and header were checked (never unpickled). Scores are always exact cosines of the
stored rows, so a shard searched by graph or by scan ranks the same rows the same way;
only a row the walk misses can differ.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.errors import IndexFormatError
from kbase_ci.index.fence import fenced

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

FILE = "vectors.usearch"
SAME_FILE = "vectors.same.npy"
"""Per chunk, the chunk whose row the graph holds for it (itself, or the first with the
same bytes); -1 for a chunk without a vector."""
MIN_ROWS = 20_000
"""Shards with at least this many vectors get a graph. The crossover (bench/ann.py, 161k
tldr paragraph vectors, 256 dims, one thread): at 10k rows the scan answers in 0.46 ms
warm and 1.3 ms from a fresh process, the graph in 0.58 and 1.5 ms; at 20k the graph wins
both ways (0.67 vs 0.83 ms warm), at 100k by 6x warm. It costs 788 bytes a vector next to
the scan's 128, so below the crossover it would only make the index bigger."""
PARAMS: dict[str, Any] = {"library": "usearch", "file": FILE, "min_rows": MIN_ROWS,
                          "metric": "ip on rows minus their mean", "dtype": "f16",
                          "connectivity": 32, "expansion_add": 256, "expansion_search": 256,
                          "threads": 1, "keys": "chunk number of the first of equal rows",
                          "same": SAME_FILE}


def build(keys: npt.NDArray[np.int64], unit: npt.NDArray[Any], dim: int) -> bytes:
    """The graph file of a shard's vectors: `unit` holds the rows `keys` (chunk numbers)
    at unit length, as the scan reads them back (`vectors.Vectors.unit_rows`)."""
    import numpy as np
    from usearch.index import Index

    rows = np.asarray(unit, dtype=np.float64)
    centred = rows - rows.mean(axis=0)
    index = Index(ndim=dim, metric="ip", dtype=PARAMS["dtype"],
                  connectivity=PARAMS["connectivity"], expansion_add=PARAMS["expansion_add"])
    index.add(np.asarray(keys, dtype=np.uint64), centred.astype(np.float32), threads=1)
    data = index.save()
    assert data is not None  # no path given: the bytes come back
    return bytes(data)


class Graph:
    """A shard's graph, memory-mapped (state: the usearch index)."""

    def __init__(self, path: Path, dim: int, rows: int) -> None:
        """`rows`: how many chunks the shard has (no key may point past them)."""
        from usearch.index import Index

        try:
            meta = Index.metadata(str(path))
        except (ValueError, RuntimeError):  # usearch's words for "not an index file"
            meta = None
        # The file's bytes match the manifest, but the manifest is data too: check that
        # the header describes this shard before usearch maps it.
        if not meta or meta.get("dimensions") != dim or \
                int(meta.get("count_present", -1)) > rows or \
                str(meta.get("kind_metric")).lower().rsplit(".", 1)[-1] != "ip":
            raise IndexFormatError(f"{path}: not the vector graph of this shard")
        index = Index(ndim=dim, metric="ip", dtype=PARAMS["dtype"],
                      connectivity=PARAMS["connectivity"],
                      expansion_search=PARAMS["expansion_search"])
        # The file passed `graphcheck` when the index was validated (kbase_ci.index.validation);
        # whatever usearch still raises is a refused graph, not a crash.
        fenced(f"{path}: usearch cannot open it", lambda: index.view(str(path)),
               IndexFormatError)
        self.index = index
        self.path = path
        self.rows = rows

    def candidates(self, unit_query: npt.NDArray[Any], k: int) -> npt.NDArray[np.int64]:
        """The chunk numbers of the `k` distinct rows the walk finds (ascending); the
        caller adds their equal rows (`SAME_FILE`) and scores them exactly."""
        import numpy as np

        if k <= 0 or not len(self.index):
            return np.zeros(0, dtype=np.int64)
        found = fenced(f"{self.path}: usearch failed on it", lambda: self.index.search(
            np.asarray(unit_query, dtype=np.float32), k, threads=1), IndexFormatError)
        keys = np.sort(np.asarray(found.keys, dtype=np.int64))
        out: npt.NDArray[np.int64] = keys[(keys >= 0) & (keys < self.rows)]
        return out
