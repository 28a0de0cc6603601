"""A model2vec static model folder read as an attacker's input: `model.safetensors`
parsed here (no safetensors package, never pickle), `config.json`, `tokenizer.json`.

What a user can download from the hub as a model2vec model, and what `Embedder` runs:
- `embeddings`: one row per token (float16/32/64, or int8 as `quantize_to="int8"` saves
  it: one scale for the whole table, which normalising the vectors cancels);
- optionally `mapping` (token id -> row, vocabulary quantization) and `weights` (a
  factor per token id); a sentence-transformers StaticEmbedding names the table
  `embedding.weight`.
- `config.json`: `max_length` (tokens kept; model2vec's 512 when absent, null: all) and
  `normalize` (kbase stores unit vectors either way: cosine ranking needs them, and a
  mean vector has the direction of its normalised self).

Sizes, dtypes, shapes and offsets are checked before a byte of a tensor is read, so a
forged header can neither allocate more than the file holds nor read outside it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from itertools import pairwise
from math import prod
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.errors import InputRefused, UsageError
from kbase_ci.index import modelfiles
from kbase_ci.state.bounded import decode_json

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

DEFAULT_MAX_LENGTH = 512  # model2vec's default when config.json names none
_HEADER_MAX = 16 << 20
"""A real header is a few hundred bytes (three tensors); safetensors itself caps 100 MB."""
_DIM_MAX = 8192
_DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "I8": "i1", "U8": "u1",
           "I16": "<i2", "I32": "<i4", "I64": "<i8"}
_TABLE_DTYPES = {"F16", "F32", "F64", "I8"}
_TABLES = ("embeddings", "embedding.weight")


@dataclass(frozen=True)
class TensorInfo:
    dtype: str
    shape: tuple[int, ...]
    start: int
    """Offset of the first byte in the file."""


def _json_object(raw: bytes, what: str) -> dict[str, Any]:
    """`raw` as a JSON object; a UsageError starting with `what` (`PATH: header is`)
    when it is not JSON or not an object."""
    try:
        got = decode_json(raw, what)
    except InputRefused as exc:  # not JSON, nested too deeply, too large to decode
        raise UsageError(f"{what} {exc.detail}") from None
    if not isinstance(got, dict):
        raise UsageError(f"{what} not a JSON object")
    return got


def read_header(path: Path) -> dict[str, TensorInfo]:
    """The tensors a safetensors file declares, checked against its size: known dtypes,
    non-negative shapes whose bytes fill exactly their offsets, offsets inside the file
    and not overlapping."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, 2)
            f.seek(0)
            head = f.read(8)
            if len(head) < 8:
                raise UsageError(f"{path}: not a safetensors file ({size} bytes)")
            (n,) = struct.unpack("<Q", head)
            if n > min(_HEADER_MAX, size - 8):
                raise UsageError(f"{path}: header of {n} bytes in a file of {size}")
            raw = f.read(n)
    except OSError as exc:
        raise UsageError(f"{path}: unreadable: {exc}") from None
    header = _json_object(raw, f"{path}: header is")
    base, data_size = 8 + n, size - 8 - n
    out: dict[str, TensorInfo] = {}
    spans: list[tuple[int, int, str]] = []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        info = _entry(path, name, entry, data_size)
        out[name] = TensorInfo(info[0], info[1], base + info[2])
        spans.append((info[2], info[3], name))
    spans.sort()
    for (_, end, a), (start, _, b) in pairwise(spans):
        if start < end:
            raise UsageError(f"{path}: tensors {a} and {b} overlap")
    return out


def _entry(path: Path, name: str, entry: Any, data_size: int
           ) -> tuple[str, tuple[int, ...], int, int]:
    where = f"{path}: tensor {name[:80]!r}"
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: not an object")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype not in _DTYPES:
        raise UsageError(f"{where}: dtype {str(dtype)[:20]} is not supported "
                         f"({', '.join(_DTYPES)})")
    if not (isinstance(shape, list) and len(shape) <= 4 and
            all(type(d) is int and d >= 0 for d in shape)):
        raise UsageError(f"{where}: bad shape {str(shape)[:80]}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and
            all(type(o) is int for o in offsets) and 0 <= offsets[0] <= offsets[1] <= data_size):
        raise UsageError(f"{where}: data offsets {str(offsets)[:80]} outside the "
                         f"{data_size} data bytes")
    import numpy as np

    want = prod(shape) * np.dtype(_DTYPES[dtype]).itemsize
    if offsets[1] - offsets[0] != want:
        raise UsageError(f"{where}: {offsets[1] - offsets[0]} bytes for shape {shape} "
                         f"of {dtype} ({want} bytes)")
    return dtype, tuple(shape), offsets[0], offsets[1]


def read_tensor(path: Path, info: TensorInfo) -> npt.NDArray[Any]:
    """One tensor's values (a checked `TensorInfo` of `path`)."""
    import numpy as np

    count = prod(info.shape)
    with path.open("rb") as f:
        f.seek(info.start)
        data = np.fromfile(f, dtype=_DTYPES[info.dtype], count=count)
    if data.size != count:  # the file shrank since its header was read
        raise UsageError(f"{path}: truncated tensor data")
    return data.reshape(info.shape)


@dataclass(frozen=True)
class StaticTables:
    """A model's checked tables: `table` rows are looked up through `mapping` (None: row
    = token id) and scaled by `weights` (None: 1)."""

    table: Any
    mapping: Any | None
    weights: Any | None
    max_length: int | None
    normalize: bool


def load_tables(folder: Path, vocab_size: int) -> StaticTables:
    """The tables of `folder`'s model for a tokenizer of `vocab_size` tokens."""
    import numpy as np

    path = folder / "model.safetensors"
    tensors = read_header(path)
    names = [n for n in _TABLES if n in tensors]
    if len(names) != 1:
        raise UsageError(f"{path}: expected one token table named "
                         f"{' or '.join(_TABLES)}, found {sorted(tensors)[:8]}")
    info = tensors[names[0]]
    if info.dtype not in _TABLE_DTYPES or len(info.shape) != 2 or \
            not 0 < info.shape[1] <= _DIM_MAX or info.shape[0] == 0:
        raise UsageError(f"{path}: the token table must be rows x 1..{_DIM_MAX} of "
                         f"{'/'.join(sorted(_TABLE_DTYPES))}, not {info.shape} {info.dtype}")
    rows = info.shape[0]
    mapping = weights = None
    if "mapping" in tensors:
        m = tensors["mapping"]
        if m.dtype[0] not in "IU" or m.shape != (vocab_size,):
            raise UsageError(f"{path}: mapping must be {vocab_size} integers (one per "
                             f"token), not {m.shape} {m.dtype}")
        mapping = read_tensor(path, m).astype(np.int64)
        if mapping.size and not (int(mapping.min()) >= 0 and int(mapping.max()) < rows):
            raise UsageError(f"{path}: mapping points outside the {rows} table rows")
    elif rows != vocab_size:
        raise UsageError(f"{path}: {rows} table rows for a tokenizer of {vocab_size} "
                         "tokens (and no mapping)")
    if "weights" in tensors:
        w = tensors["weights"]
        if w.dtype[0] != "F" or w.shape != (vocab_size,):
            raise UsageError(f"{path}: weights must be {vocab_size} floats (one per "
                             f"token), not {w.shape} {w.dtype}")
        weights = read_tensor(path, w).astype(np.float64)
        if not bool(np.isfinite(weights).all()):
            raise UsageError(f"{path}: weights are not all finite")
    # Kept as stored (float16 for most models): a query needs a few rows, not a float
    # copy of all of them, and float16/int8 -> float64 is exact either way.
    table = read_tensor(path, info)
    if table.dtype.kind == "f" and not _finite(table):
        raise UsageError(f"{path}: the token table holds NaN or infinite values")
    max_length, normalize = read_config(folder / "config.json")
    return StaticTables(table, mapping, weights, max_length, normalize)


def _finite(values: npt.NDArray[Any]) -> bool:
    """Whether no value is NaN or infinite, read from the exponent bits (all ones only
    for those): on a float16 table 1.5-2 ms where `np.isfinite` took 9 (a query loads
    the table on every run)."""
    width = values.dtype.itemsize * 8
    exponent = {16: 0x7C00, 32: 0x7F800000, 64: 0x7FF0000000000000}[width]
    magnitude = (1 << (width - 1)) - 1
    bits = values.view(values.dtype.str.replace("f", "u"))  # same byte order: '<f2' '<u2'
    return not values.size or int((bits & magnitude).max()) < exponent


def read_config(path: Path) -> tuple[int | None, bool]:
    """(`max_length`, `normalize`) of a model2vec `config.json` (absent: 512, False)."""
    try:
        raw = modelfiles.read(path, path.parent)
    except FileNotFoundError:
        return DEFAULT_MAX_LENGTH, False
    except InputRefused:
        raise  # a FIFO, a device, a link out of the folder, above 1 MiB: it says which
    except OSError as exc:
        raise UsageError(f"{path}: unreadable: {exc}") from None
    config = _json_object(raw, f"{path}:")
    max_length = config.get("max_length", DEFAULT_MAX_LENGTH)
    if max_length is not None and not (type(max_length) is int and max_length > 0):
        raise UsageError(f"{path}: max_length must be a positive integer or null, "
                         f"not {str(max_length)[:40]}")
    normalize = config.get("normalize", False)
    if type(normalize) is not bool:
        raise UsageError(f"{path}: normalize must be true or false")
    return max_length, normalize


def check_tokenizer_size(path: Path) -> None:
    """Refuse a `tokenizer.json` too large to be a real one, or no regular file of the
    folder, before the tokenizer library opens it (kbase_ci.index.modelfiles)."""
    try:
        modelfiles.check(path, path.parent)
    except InputRefused:
        raise
    except OSError as exc:
        raise UsageError(f"{path}: unreadable: {exc}") from None


def row_vectors(tables: StaticTables, ids: npt.NDArray[np.int64], dim: int
                ) -> npt.NDArray[np.float64]:
    """The float64 vectors (first `dim` components) that the tokens `ids` add to a sum."""
    import numpy as np

    rows = ids if tables.mapping is None else tables.mapping[ids]
    out: npt.NDArray[np.float64] = tables.table[rows, :dim].astype(np.float64)
    if tables.weights is not None:
        out *= tables.weights[ids][:, None]
    return out
