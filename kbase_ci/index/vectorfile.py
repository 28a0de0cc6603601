"""One shard's vectors: chunk embeddings as 4-bit integers in `vectors.npy`, searched
exactly.

Row j is chunk j of the shard's `chunks.json`; an all-zero row is a chunk without a
vector (nothing the model knows). Each row is the unit embedding scaled so its largest
component is +-7 and rounded, and two components share a byte (`pack`). Cosine
similarity does not depend on a vector's length, and a per-row scale keeps the rounding
error small. Measured with ../shared/models/minilm-static-256 (format 3 had 8 bits,
twice the bytes): semantic MRR@10 on 300 hard tldr queries 0.453 -> 0.441, on
obsidian-tasks-docs 0.493 -> 0.482, hybrid unchanged (0.905 and 0.688 both times);
keeping 128 of the 256 dimensions at 8 bits, the same bytes, fell to 0.395 on tldr,
and 3 bits to 0.392. usearch's f16 HNSW graph, approximate at this size, kept 0.88 of
the exact top 10 on the 10k-note benchmark at 8x these bytes (docs/index-format.md). A
shard holds a few thousand chunks, so a query's exact scan of every shard costs
milliseconds; the index must not outgrow the vault.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.index.rowfile import npy_bytes

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

LEVELS = 7
"""Components are integers in -LEVELS..LEVELS, stored as 4-bit `value + 8`."""

def quantize(matrix: npt.NDArray[Any]) -> npt.NDArray[np.int8]:
    import numpy as np

    m = np.asarray(matrix, dtype=np.float32)
    peak = np.abs(m).max(axis=1, keepdims=True) if m.size else np.zeros((len(m), 1))
    scaled = np.divide(m * float(LEVELS), peak, out=np.zeros_like(m), where=peak > 0)
    out: npt.NDArray[np.int8] = np.rint(scaled).astype(np.int8)
    return out


def pack(values: npt.NDArray[np.int8]) -> npt.NDArray[np.uint8]:
    """Rows of integers in -8..7 as bytes, two per byte; an odd width gets a zero last
    component, which no cosine sees."""
    import numpy as np

    v = np.asarray(values, dtype=np.int16) + 8
    if v.shape[1] % 2:
        v = np.hstack([v, np.full((len(v), 1), 8, dtype=np.int16)])
    out: npt.NDArray[np.uint8] = ((v[:, 0::2] << 4) | v[:, 1::2]).astype(np.uint8)
    return out


def unpack(packed: npt.NDArray[np.uint8], dim: int | None = None) -> npt.NDArray[np.int8]:
    """`pack`'s rows back as int8, `dim` components each (default: all)."""
    import numpy as np

    p = np.asarray(packed, dtype=np.uint8)
    out = np.empty((len(p), 2 * p.shape[1]), dtype=np.int8)
    out[:, 0::2] = (p >> 4).astype(np.int8) - 8
    out[:, 1::2] = (p & 15).astype(np.int8) - 8
    return out[:, :dim] if dim is not None else out


def merge_rows(notes: Sequence[str], kept: dict[str, bytes], new: npt.NDArray[np.uint8],
               width: int) -> npt.NDArray[np.uint8]:
    """A shard's packed rows (`width` bytes each) in chunk order (`notes`: the note of
    each chunk): a note of `kept` takes its stored rows, in order; the others take the
    rows of `new`, which holds their chunks, in order."""
    import numpy as np

    out = np.empty((len(notes), width), dtype=np.uint8)
    taken: dict[str, int] = {}
    fresh = 0
    for j, p in enumerate(notes):
        rows = kept.get(p)
        if rows is None:
            out[j] = new[fresh]
            fresh += 1
        else:
            at = taken.get(p, 0)
            out[j] = np.frombuffer(rows, dtype=np.uint8, count=width, offset=at * width)
            taken[p] = at + 1
    return out


def write_packed(packed: npt.NDArray[np.uint8], out: Path) -> int:
    """Write packed rows to `out`; returns how many are non-zero vectors (a zero vector
    packs to bytes of 0x88)."""
    import numpy as np


    out.write_bytes(npy_bytes(packed, "|u1"))
    return int(np.count_nonzero(np.any(packed != 0x88, axis=1)))
