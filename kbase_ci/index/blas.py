"""How many threads numpy's BLAS may use here: one, for kbase's small matrix products.

OpenBLAS threads spin while they wait. Index builds multiply many small matrices in two
worker processes, and queries one matrix by one vector per shard: with spinning threads
on two busy cores, embedding ran 3-4x slower, and a 2,000-row product took 22 ms instead
of 0.1 ms (bench/ann.py). numpy has no API for this and OPENBLAS_NUM_THREADS is read only
when numpy is imported, so the library's own setter is called. Best effort: other BLAS
builds are left as they are.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def _openblas_calls() -> tuple[Any, Any] | None:
    """(get_num_threads, set_num_threads) of the OpenBLAS numpy loaded, if any."""
    import ctypes

    try:
        with open("/proc/self/maps", encoding="utf-8") as fh:
            libs = sorted({ln.split()[-1] for ln in fh if "openblas" in ln.lower()})
    except OSError:
        return None
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("scipy_openblas", ""),
                               ("openblas", "64_"), ("openblas", "")):
            getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
            setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
            if getter is not None and setter is not None:
                getter.restype = ctypes.c_int
                return getter, setter
    return None


def one_blas_thread() -> None:
    """Limit numpy's OpenBLAS to one thread in this process."""
    calls = _openblas_calls()
    if calls is not None:
        calls[1](1)


@contextmanager
def blas_single_threaded() -> Iterator[None]:
    """`one_blas_thread` for a block of this process, then the old setting back."""
    calls = _openblas_calls()
    before = calls[0]() if calls is not None else None
    if calls is not None:
        calls[1](1)
    try:
        yield
    finally:
        if calls is not None and before is not None:
            calls[1](before)
