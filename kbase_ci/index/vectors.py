"""One shard's vectors searched: exactly, or through its `ann` graph (the stored format:
kbase_ci.index.vectorfile).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.errors import IndexFormatError
from kbase_ci.index import ann
from kbase_ci.index.rowfile import npy_bytes
from kbase_ci.index.vectorfile import LEVELS, unpack
from kbase_ci.state.threads import one_blas_thread

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

FILE = "vectors.npy"
_DIGITS = 6
"""Cosines are compared at this many decimals: BLAS rounds a row's product differently
by where the row falls in its kernel's blocks, and equal rows must tie (then the lower
chunk number wins) whichever way, graph or scan, found them."""
_BLOCK = 2048
"""Rows a one-shot scan unpacks at a time (fits the CPU cache)."""
PARAMS: dict[str, Any] = {"metric": "cos", "dtype": "i4, two per byte (high nibble first)",
                          "scale": f"per row, max |x| = {LEVELS}", "search": "exact"}


def settings() -> dict[str, Any]:
    return {**PARAMS, "library": "numpy", "file": FILE, "rows": "chunk number",
            "grain": "paragraph (kbase_ci.index.chunks)", "rollup": "max",
            "ann": ann.PARAMS}


@dataclass(frozen=True)
class Found:
    keys: npt.NDArray[np.uint64]
    distances: npt.NDArray[np.float32]
    """1 - cosine similarity, ascending."""


class Vectors:
    """A shard's vectors (state: the packed matrix, memory-mapped; row norms and, once a
    second search asks, the rows at unit length)."""

    def __init__(self, packed: npt.NDArray[np.uint8], dim: int | None = None,
                 graph: tuple[Path, npt.NDArray[Any]] | None = None,
                 confirm: Callable[[], None] | None = None) -> None:
        """`graph`: the shard's `ann` graph file and its `ann.SAME_FILE` array;
        `confirm`: called once usearch opened the graph by its path (the index folder
        checks the path still named its generation, kbase_ci.state.generations)."""
        self._confirm = confirm
        self.packed = packed
        self.ndim = (2 * int(packed.shape[1]) if dim is None else dim) \
            if packed.ndim == 2 else 0
        self.graph_path = graph[0] if graph is not None else None
        self._same = graph[1] if graph is not None else None
        self._graph: Any = None
        self.refused: str | None = None
        """Why the graph was refused (then every search scans)."""
        self._norms: npt.NDArray[np.float32] | None = None
        self._unit: npt.NDArray[np.float32] | None = None
        self._searches = 0

    def graph_files(self) -> tuple[bytes, bytes]:
        """An `ann` graph of these rows (each distinct row with a vector once, as the scan
        reads it back), and `ann.SAME_FILE`: per row, the row the graph holds for it."""
        import numpy as np

        rows = self.rows
        same = np.full(len(self.packed), -1, dtype=np.int64)
        if len(rows):
            _, first, inverse = np.unique(np.asarray(self.packed)[rows], axis=0,
                                          return_index=True, return_inverse=True)
            same[rows] = rows[first][inverse.reshape(-1)]
        keys = np.unique(same[rows])
        graph = ann.build(keys, self.unit_rows()[keys], self.ndim)
        return graph, npy_bytes(same, "<i4")

    def unit_rows(self) -> npt.NDArray[np.float32]:
        """The rows at unit length as float32 (zero rows stay zero), computed once: a
        long-lived process (the MCP server) then pays only the product per query."""
        import numpy as np

        if self._unit is None:
            wide: npt.NDArray[np.float32] = unpack(self.packed, self.ndim).astype(np.float32)
            self._norms = np.sqrt(np.einsum("ij,ij->i", wide, wide))
            np.divide(wide, self._norms[:, None], out=wide, where=self._norms[:, None] > 0)
            self._unit = wide
        return self._unit

    @property
    def norms(self) -> npt.NDArray[np.float32]:
        if self._norms is None:
            self._scan(None)
        assert self._norms is not None
        return self._norms

    @property
    def rows(self) -> npt.NDArray[np.intp]:
        """Chunk numbers that have a vector."""
        import numpy as np

        return np.flatnonzero(self.norms > 0)

    def __len__(self) -> int:
        import numpy as np

        return int(np.count_nonzero(self.norms))

    def _scan(self, query: npt.NDArray[np.float32] | None) -> npt.NDArray[np.float32]:
        """Cosines of every row with the unit `query` (and the row norms, kept), straight
        from the packed bytes a block at a time: a one-shot query does not build the
        float32 matrix (on the generated 10k-note vault, 211k rows: ~100 ms instead of
        ~600 ms)."""
        import numpy as np

        n, width = len(self.packed), int(self.packed.shape[1]) if self.packed.ndim == 2 else 0
        dots = np.zeros(n, dtype=np.float32)
        norms = np.zeros(n, dtype=np.float32) if self._norms is None else self._norms
        if query is not None:
            q = np.zeros(2 * width, dtype=np.float32)
            q[:len(query)] = query
            even, odd = q[0::2], q[1::2]
        for start in range(0, n, _BLOCK):
            block = np.asarray(self.packed[start:start + _BLOCK])
            high = (block >> 4).astype(np.float32) - 8.0
            low = (block & 15).astype(np.float32) - 8.0
            if self._norms is None:
                norms[start:start + _BLOCK] = np.sqrt(
                    np.einsum("ij,ij->i", high, high) + np.einsum("ij,ij->i", low, low))
            if query is not None:
                dots[start:start + _BLOCK] = high @ even + low @ odd
        self._norms = norms
        return np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)

    def rows_cosine(self, keys: npt.NDArray[np.int64], unit_query: npt.NDArray[Any]
                    ) -> npt.NDArray[np.float32]:
        """Cosines of the rows `keys` with a unit-length query (0 for a zero row)."""
        import numpy as np

        wide = unpack(np.asarray(self.packed)[keys], self.ndim).astype(np.float32)
        norms = np.sqrt(np.einsum("ij,ij->i", wide, wide))
        dots = wide @ np.asarray(unit_query, dtype=np.float32)
        out: npt.NDArray[np.float32] = np.divide(dots, norms, out=np.zeros_like(dots),
                                                 where=norms > 0)
        return out

    def search(self, query: npt.NDArray[Any], k: int) -> Found:
        """The `k` nearest chunks by cosine (ties: lower chunk number first). A shard
        with a graph (`ann`) is walked; others are scanned whole, from the packed rows
        the first time and from float32 rows kept for any later query."""
        import numpy as np

        q = np.asarray(query, dtype=np.float32)
        qn = float(np.linalg.norm(q))
        if qn == 0 or k <= 0 or not len(self.packed):
            return Found(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.float32))
        _one_blas_thread()
        found = self._walk(q / qn, k) if self.graph_path is not None else None
        if found is not None:
            same = np.asarray(self._same)
            keys = np.flatnonzero(np.isin(same, found)).astype(np.int64)
            sims = np.round(self.rows_cosine(keys, q / qn), _DIGITS)
            order = np.argsort(-sims, kind="stable")[:k]
            return Found(keys[order].astype(np.uint64), (1.0 - sims[order]).astype(np.float32))
        self._searches += 1
        if self._searches > 1 or self._unit is not None:
            all_sims = self.unit_rows() @ (q / qn)
        else:
            all_sims = self._scan(q / qn)
        rows = np.flatnonzero(self.norms > 0)
        sims = np.round(all_sims[rows], _DIGITS).astype(np.float32, copy=False)
        if not len(rows):
            return Found(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.float32))
        if len(sims) > k:  # a partial sort; the stable sort below keeps the tie order
            cut = np.partition(-sims, k - 1)[k - 1]
            keep = np.flatnonzero(-sims <= cut)
            rows, sims = rows[keep], sims[keep]
        top = np.argsort(-sims, kind="stable")[:k]
        return Found(rows[top].astype(np.uint64), (1.0 - sims[top]).astype(np.float32))

    def _walk(self, unit_query: npt.NDArray[Any], k: int) -> npt.NDArray[Any] | None:
        """The graph's candidates, or None when usearch refused the graph: this shard is
        then scanned exactly (the same scores; `refused` says why)."""
        assert self.graph_path is not None
        try:
            if self._graph is None:
                if self._same is None or len(self._same) != len(self.packed):
                    raise IndexFormatError(f"{self.graph_path}: {ann.SAME_FILE} does not "
                                           "hold one row per chunk")
                self._graph = ann.Graph(self.graph_path, self.ndim, len(self.packed))
                if self._confirm is not None:
                    self._confirm()
            got: npt.NDArray[Any] = self._graph.candidates(unit_query, k)
        except IndexFormatError as exc:
            self.refused, self.graph_path, self._graph = str(exc), None, None
            return None
        return got

    def unit(self, key: int) -> npt.NDArray[np.float16] | None:
        """Chunk `key`'s vector at unit length (f16), None when it has none."""
        import numpy as np

        key = int(key)
        if not 0 <= key < len(self.norms) or self.norms[key] == 0:
            return None
        out: npt.NDArray[np.float16] = self.unit_rows()[key].astype(np.float16)
        return out

    def get(self, keys: Any, dtype: str = "f16") -> Any:
        """usearch-style: a vector (or None) for one key, a list of them for many."""
        import numpy as np

        if np.ndim(keys) == 0:
            return self.unit(int(keys))
        return [self.unit(int(k)) for k in np.asarray(keys).tolist()]


_blas_set = False


def _one_blas_thread() -> None:
    """Searches multiply one vector by each shard's rows: spinning BLAS threads only
    slow that down (kbase_ci.state.threads), so a process that searches keeps to one, once."""
    global _blas_set
    if not _blas_set:
        one_blas_thread()
        _blas_set = True


def load_vectors(path: Path, dim: int | None = None) -> Vectors:
    import numpy as np

    return Vectors(np.load(path, mmap_mode="r", allow_pickle=False), dim)


def read_matrix(path: Path, rows: int, dim: int) -> npt.NDArray[np.float32]:
    """All vectors of a shard as float32 unit rows by chunk number (zeros where absent)."""
    return unit_matrix(load_vectors(path, dim), rows, dim)


def unit_matrix(vecs: Vectors, rows: int, dim: int) -> npt.NDArray[np.float32]:
    """`read_matrix` of vectors already loaded."""
    import numpy as np

    out = np.zeros((rows, dim), dtype=np.float32)
    keep = vecs.rows[vecs.rows < rows]
    # The same f16 rounding as `Vectors.unit`, a row at a time.
    out[keep] = vecs.unit_rows()[keep].astype(np.float16)
    return out
