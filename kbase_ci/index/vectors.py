"""One shard's vectors: a usearch HNSW index of chunk embeddings, stored as f16.

Built with `threads=1`: a multi-threaded HNSW build inserts in a racy order and the
saved bytes differ from run to run (dependency-findings.md section 4). Keys are chunk
numbers in the shard's `chunks.json`; a chunk whose embedding is all zeros (nothing the
model knows) has no vector. Readers open the file memory-mapped (`view=True`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

FILE = "vectors.usearch"
PARAMS: dict[str, Any] = {"metric": "cos", "dtype": "f16", "connectivity": 16,
                          "expansion_add": 128, "expansion_search": 64}


def settings() -> dict[str, Any]:
    return {**PARAMS, "library": "usearch", "file": FILE, "keys": "chunk number"}


def build_vectors(matrix: npt.NDArray[np.float16], out: Path) -> int:
    """Write the index of `matrix` rows (key = row number, zero rows skipped) to `out`;
    returns how many vectors it holds."""
    import numpy as np
    from usearch.index import Index

    keep = np.flatnonzero(np.any(matrix != 0, axis=1)).astype(np.uint64)
    index = Index(ndim=int(matrix.shape[1]), **PARAMS)
    if len(keep):
        index.add(keep, matrix[keep], threads=1)
    data = index.save()  # no path: the file's bytes
    if data is None:
        raise RuntimeError("usearch returned no bytes for an in-memory save")
    out.write_bytes(bytes(data))
    return len(keep)


def load_vectors(path: Path, *, view: bool = True) -> Any:
    from usearch.index import Index

    return Index.restore(str(path), view=view)


def read_matrix(path: Path, rows: int, dim: int) -> npt.NDArray[np.float32]:
    """All vectors of a shard as float32 rows by chunk number (zeros where absent)."""
    import numpy as np

    out = np.zeros((rows, dim), dtype=np.float32)
    index = load_vectors(path)
    if len(index) == 0:
        return out
    keys = np.arange(rows, dtype=np.uint64)
    got = index.get(keys, dtype="f16")
    if all(v is not None for v in got):
        out[:] = np.vstack(got)
        return out
    for key, vec in zip(keys, got, strict=True):
        if vec is not None:
            out[int(key)] = vec
    return out
