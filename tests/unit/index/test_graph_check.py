"""`graphcheck.check_graph` against usearch's own files: every graph usearch writes
passes, and each forgery that made usearch read outside its file (issue 28: SIGSEGV,
exit 139) or fail (a truncated file: exit 3) is refused before usearch sees it."""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np
import pytest

from kbase_ci.errors import IndexFormatError
from kbase_ci.index import ann
from kbase_ci.index.graphcheck import GRAPH_HEAD, HEAD, check_graph

DIM = 8
CONN = int(ann.PARAMS["connectivity"])


def _graph(n: int, seed: int = 0) -> bytes:
    from usearch.index import Index

    index = Index(ndim=DIM, metric="ip", dtype="f16", connectivity=CONN, expansion_add=32)
    if n:
        rows = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
        index.add(np.arange(n, dtype=np.uint64), rows, threads=1)
    return bytes(index.save())


def _nodes(data: bytes) -> int:
    """Where the first node starts."""
    count = struct.unpack_from("<I", data, 0)[0]
    return 8 + count * 2 * DIM + HEAD + GRAPH_HEAD + 2 * count


def _at(offset: Callable[[bytes], int], value: bytes) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        at = offset(data)
        return data[:at] + value + data[at + len(value):]
    return edit


GRAPH_AT = 8 + 300 * 2 * DIM + HEAD
FORGERIES: dict[str, Callable[[bytes], bytes]] = {
    "neighbour slot past the nodes": _at(lambda d: _nodes(d) + 10 + 4,
                                         struct.pack("<I", 10**8)),
    "neighbour count past its list": _at(lambda d: _nodes(d) + 10, struct.pack("<I", 999)),
    "truncated": lambda d: d[:len(d) - 100],
    "bytes appended": lambda d: d + b"\0" * 64,
    "entry node past the end": _at(lambda d: GRAPH_AT + 32, struct.pack("<Q", 10**6)),
    "top level of a million": _at(lambda d: GRAPH_AT + 24, struct.pack("<Q", 10**6)),
    "node count larger than the vectors": _at(lambda d: GRAPH_AT, struct.pack("<Q", 301)),
    "a level list entry of -1": _at(lambda d: GRAPH_AT + GRAPH_HEAD, struct.pack("<h", -1)),
    "a key past the shard": _at(_nodes, struct.pack("<Q", 10**9)),
    "other connectivity": _at(lambda d: GRAPH_AT + 8, struct.pack("<Q", 4)),
    "another metric": _at(lambda d: 8 + 300 * 2 * DIM + 13, b"c"),
    "a deleted node": _at(lambda d: 8 + 300 * 2 * DIM + 25, struct.pack("<Q", 1)),
    "other dimensions": _at(lambda d: 4, struct.pack("<I", 2 * DIM + 2)),
    "empty": lambda d: b"",
}


@pytest.mark.parametrize("n", [0, 1, 2, 300, 3000])
def test_every_graph_usearch_writes_passes(n: int) -> None:
    check_graph(_graph(n), DIM, max(n, 1), CONN)


@pytest.mark.parametrize("case", list(FORGERIES))
def test_each_forgery_is_refused(case: str) -> None:
    good = _graph(300)
    check_graph(good, DIM, 300, CONN)
    with pytest.raises(IndexFormatError, match="not a usearch graph"):
        check_graph(FORGERIES[case](good), DIM, 300, CONN)


def test_a_graph_of_more_nodes_than_the_shard_has_chunks_is_refused() -> None:
    with pytest.raises(IndexFormatError):
        check_graph(_graph(300), DIM, 299, CONN)


def test_random_bytes_never_pass_and_never_crash() -> None:
    rng = np.random.default_rng(5)
    good = _graph(300)
    for _ in range(300):
        data = bytearray(good)
        for at in rng.integers(0, len(data), size=4):
            data[int(at)] = int(rng.integers(0, 256))
        try:
            check_graph(bytes(data), DIM, 300, CONN)
        except IndexFormatError:
            continue
        # What passes must be safe for usearch: walk it.
        from usearch.index import Index

        index = Index(ndim=DIM, metric="ip", dtype="f16", connectivity=CONN)
        index.load(bytes(data))  # type: ignore[arg-type]
        index.search(np.ones(DIM, dtype=np.float32), 10)
