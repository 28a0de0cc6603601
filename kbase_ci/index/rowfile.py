"""Row files: a table stored as JSON lines (`X.jsonl`, one canonical JSON array per row)
beside `X.offsets.npy` (byte offset of every row, plus the end: int32, or int64 past
2 GiB), so a query reads the rows it needs without decoding the whole table; and `.npy`
arrays written with stable bytes (`np.save`'s header depends only on dtype and shape).
"""

from __future__ import annotations

import array
import io
import json
import mmap
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.index.manifest import dump_table

if TYPE_CHECKING:
    import numpy.typing as npt


def offsets_name(jsonl: str) -> str:
    """`notes.jsonl` -> `notes.offsets.npy` (works for relative paths too)."""
    return jsonl.removesuffix(".jsonl") + ".offsets.npy"


def npy_bytes(array: npt.ArrayLike, dtype: Any) -> bytes:
    import numpy as np

    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(np.asarray(array, dtype=dtype)), allow_pickle=False)
    return buf.getvalue()


def write_npy(path: Path, array: npt.ArrayLike, dtype: Any) -> None:
    path.write_bytes(npy_bytes(array, dtype))


def write_rows(path: Path, rows: Sequence[Any],
               reuse: Callable[[int, Any], bytes | None] | None = None) -> None:
    """Write `rows` to `path` (a `.jsonl`) and its offsets file beside it. `reuse(i, row)`
    may give row i's line as already encoded (an incremental build's unchanged rows)."""
    if reuse is None:
        parts = [dump_table(row) for row in rows]  # each ends with "\n"
    else:
        parts = [reuse(i, row) or dump_table(row) for i, row in enumerate(rows)]
    ends = [0]
    for p in parts:
        ends.append(ends[-1] + len(p))
    path.write_bytes(b"".join(parts))
    write_npy(path.parent / offsets_name(path.name), ends, offsets_dtype(ends[-1]))


def offsets_dtype(end: int) -> str:
    """The narrowest of uint16, int32 and int64 that holds 0..`end` (offsets, pointers,
    link numbers): a vault of 38k short notes has 38k pointers per table."""
    return "<u2" if end < 2**16 else "<i4" if end < 2**31 else "<i8"


_HEADER = re.compile(rb"\{'descr': '(\|[iu]1|<[iu][248]|<f[48])', 'fortran_order': False, "
                     rb"'shape': \(((?:\d+, ?)*\d*)\), \}")
_CODES = {b"i1": "b", b"u1": "B", b"i2": "h", b"u2": "H", b"i4": "i", b"u4": "I",
          b"i8": "q", b"u8": "Q"}


def npy_layout(head: bytes) -> tuple[str, tuple[int, ...], int] | None:
    """(dtype, shape, data offset) of a version 1.0 `.npy` of plain numbers as
    `np.save` writes them (bytes `|i1 |u1`, little-endian `<i2..<u8`, `<f4 <f8`: nothing
    numpy cannot map, such as a forged `<f1`); None for anything else. Parsed with a
    regex: numpy's own reader evaluates the header as a Python literal, which costs
    ~0.4 ms per file."""
    if not head.startswith(b"\x93NUMPY\x01\x00"):
        return None
    size = int.from_bytes(head[8:10], "little")
    m = _HEADER.match(head[10:10 + size])
    if m is None:
        return None
    shape = tuple(int(x) for x in m.group(2).replace(b" ", b"").split(b",") if x)
    return m.group(1).decode(), shape, 10 + size


def int_view(data: bytes | mmap.mmap) -> memoryview | None:
    """A one-dimensional little-endian integer `.npy` file's values as a memoryview,
    without importing numpy (~60 ms of a 100 ms query); None for any other array, which
    the caller then loads with numpy."""
    layout = npy_layout(data[:256])
    if sys.byteorder != "little" or layout is None:
        return None
    descr, shape, start = layout
    if len(shape) != 1 or descr[1] == "f":
        return None
    view = _cast(data, start, _CODES[descr[1:].encode()])
    return view if view is not None and len(view) == shape[0] else None


def _cast(data: bytes | mmap.mmap, start: int, code: str) -> memoryview | None:
    """The bytes from `start` as items of `code`; None when they are no whole number of
    items (a forged file: memoryview refuses it with a TypeError)."""
    try:
        return memoryview(data)[start:].cast(code)  # type: ignore[call-overload,no-any-return]
    except (TypeError, ValueError):
        return None


def int_table(data: bytes) -> tuple[Sequence[int], int] | None:
    """A two-dimensional integer `.npy` file as (its values row after row, the row
    width), without importing numpy; None for any other array. The files are
    little-endian: a big-endian host gets a byte-swapped copy instead of a view."""
    layout = npy_layout(data[:256])
    if layout is None:
        return None
    descr, shape, start = layout
    if len(shape) != 2 or descr[1] == "f":
        return None
    code = _CODES[descr[1:].encode()]
    values: Sequence[int] | None
    if sys.byteorder == "little":
        values = _cast(data, start, code)
    else:
        try:
            swapped = array.array(code, data[start:])
        except ValueError:  # no whole number of items
            return None
        swapped.byteswap()
        values = swapped
    if values is None or len(values) != shape[0] * shape[1]:
        return None
    return values, shape[1]


def row_at(data: bytes | memoryview, offsets: Any, i: int) -> Any:
    return json.loads(bytes(data[int(offsets[i]):int(offsets[i + 1])]))


def all_rows(data: bytes) -> list[Any]:
    """Every row at once: one decode of the lines joined into a JSON list."""
    body = data.rstrip(b"\n")
    return json.loads(b"[" + body.replace(b"\n", b",") + b"]") if body else []
