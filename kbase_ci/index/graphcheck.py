"""A shard's usearch graph (`vectors.usearch`) checked whole before usearch maps it.

usearch trusts its file: a neighbour slot past the end of the graph, a level above the
file's top level or a node list shorter than its counts makes it read outside the
mapping, and the process dies (SIGSEGV, exit 139; issue 28). No handler catches that,
so every number usearch follows is checked here first, with numpy, against the layout
usearch 2.x writes (`Index.save`, checked against that version's own files by
tests/unit/index/test_graph_check.py):

1. the vectors: rows (u32) and bytes a row (u32), then the rows (f16: 2 bytes a
   dimension);
2. `index_dense_head_t`, 64 bytes: `usearch`, version (3 x u16, major 2), metric,
   scalar, key and slot kinds (one byte each: ip, f16, u64, u32), count_present,
   count_deleted, dimensions (u64 each), multi (bool);
3. `index_serialized_header_t`: size, connectivity, connectivity_base, max_level,
   entry_slot (u64 each);
4. each node's level (i16, `size` of them);
5. each node: key (u64), level (i16), its base neighbours (count u32 and
   `connectivity_base` u32 slots), then per level above 0 `connectivity` slots the same.

What must hold: the file is exactly that long; the kinds, dimensions, connectivity are
the ones kbase builds with (kbase_ci.index.ann.PARAMS); no deleted nodes; node count =
vector rows = count_present <= the shard's chunks; every level 0..max_level, as the
level list says, the entry node on the top level; every key a chunk of the shard, each
once; every neighbour count within its list and every listed slot a node of the graph.
A file that passes is one usearch reads within bounds.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from kbase_ci.errors import IndexFormatError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_MAGIC = b"usearch"
_KINDS = bytes([ord("i"), 12, 14, 15])
"""metric ip, scalar f16, key u64, slot u32 (usearch's `metric_kind_t`, `scalar_kind_t`)."""
HEAD = 64
GRAPH_HEAD = 40
MAX_LEVEL = 64
"""HNSW levels grow as log(nodes): 2**64 nodes would not reach this."""
_BLOCK = 4096
"""Nodes checked at a time (bounds the temporaries: 4096 x 64 slots x 8 bytes)."""


def check_graph(data: bytes | memoryview | Any, dim: int, rows: int,
                connectivity: int) -> None:
    """IndexFormatError unless `data` is a usearch graph of at most `rows` chunks of
    `dim` dimensions that usearch can walk without reading past its end."""
    import numpy as np

    buf = np.frombuffer(data, dtype=np.uint8)
    total = len(buf)

    def fail(why: str) -> IndexFormatError:
        return IndexFormatError(f"not a usearch graph kbase can use: {why}")

    def u64s(at: int, n: int) -> tuple[int, ...]:
        if at + 8 * n > total:
            raise fail("it ends inside its header")
        return struct.unpack_from(f"<{n}Q", data, at)

    if total < 8:
        raise fail("it is shorter than its header")
    count, width = struct.unpack_from("<II", data, 0)
    if width != 2 * dim:
        raise fail(f"its vectors have {width} bytes, not {2 * dim}")
    at = 8 + count * width
    if at + HEAD + GRAPH_HEAD > total:
        raise fail("it ends inside its header")
    head = bytes(buf[at:at + HEAD])
    major = struct.unpack_from("<H", head, 7)[0]
    present, deleted, dims = struct.unpack_from("<3Q", head, 17)
    if head[:7] != _MAGIC or major != 2 or head[13:17] != _KINDS:
        raise fail("its header is not usearch 2 with ip, f16, u64 keys and u32 slots")
    if dims != dim or deleted != 0 or present != count or count > rows:
        raise fail(f"its header says {present} nodes ({deleted} deleted) of {dims} "
                   f"dimensions for {count} vectors; the shard has {rows} chunks of {dim}")
    size, conn, base, top, entry = u64s(at + HEAD, 5)
    at += HEAD + GRAPH_HEAD
    if size != count or conn != connectivity or base != 2 * connectivity:
        raise fail(f"its graph has {size} nodes and connectivity {conn}/{base}")
    if size == 0:
        if at != total:
            raise fail("an empty graph with bytes after it")
        return
    if top > MAX_LEVEL or entry >= size:
        raise fail(f"top level {top} or entry node {entry} out of range")
    if at + 2 * size > total:
        raise fail("it ends inside its level list")
    levels = buf[at:at + 2 * size].view("<i2").astype(np.int64)
    at += 2 * size
    if levels.min() < 0 or levels.max() != top or levels[entry] != top:
        raise fail("a node level is outside 0..top, or the entry node is not on top")
    head_bytes, base_bytes, level_bytes = 10, 4 + 4 * base, 4 + 4 * conn
    sizes = head_bytes + base_bytes + levels * level_bytes
    starts = at + np.concatenate(([0], np.cumsum(sizes)[:-1]))
    if at + int(sizes.sum()) != total:
        raise fail(f"it has {total} bytes, not the {at + int(sizes.sum())} its nodes take")
    keys = np.empty(size, dtype=np.int64)
    for lo in range(0, size, _BLOCK):
        hi = min(size, lo + _BLOCK)
        first = starts[lo:hi]
        keys[lo:hi] = _u(buf, first, 8)
        if not np.array_equal(_u(buf, first + 8, 2).astype(np.int16), levels[lo:hi]):
            raise fail("a node's level differs from the level list")
        _lists(buf, first + head_bytes, base, size, fail)
        for level in range(1, int(levels[lo:hi].max()) + 1):
            on = np.flatnonzero(levels[lo:hi] >= level)
            _lists(buf, first[on] + head_bytes + base_bytes + (level - 1) * level_bytes,
                   conn, size, fail)
    if keys.min() < 0 or keys.max() >= rows or len(np.unique(keys)) != size:
        raise fail("a key is not a chunk of the shard, or appears twice")


def _u(buf: npt.NDArray[np.uint8], at: npt.NDArray[Any], width: int) -> npt.NDArray[Any]:
    """The little-endian unsigned integers of `width` bytes at offsets `at` (any
    alignment)."""
    import numpy as np

    cols = np.asarray(at, dtype=np.int64)[:, None] + np.arange(width)
    out: npt.NDArray[Any] = buf[cols].copy().view(f"<u{width}").reshape(-1)
    return out.astype(np.uint64)


def _lists(buf: npt.NDArray[np.uint8], at: npt.NDArray[Any], capacity: int, size: int,
           fail: Any) -> None:
    """Neighbour lists at offsets `at`: a count (u32) within `capacity`, then that many
    slots (of `capacity` stored) each below `size`."""
    import numpy as np

    if not len(at):
        return
    counts = _u(buf, at, 4)
    if counts.max() > capacity:
        raise fail("a neighbour list is longer than it can be")
    slots = _u(buf, (np.asarray(at, dtype=np.int64)[:, None] + 4 + 4 * np.arange(capacity)
                     ).reshape(-1), 4).reshape(len(at), capacity)
    used = np.arange(capacity)[None, :] < counts[:, None].astype(np.int64)
    if bool((slots[used] >= size).any()):
        raise fail("a neighbour slot points past the graph's nodes")
