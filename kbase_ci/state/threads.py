"""How many threads numpy's BLAS may use here: one, for kbase's small matrix products.

OpenBLAS threads spin while they wait. Index builds multiply many small matrices in two
worker processes, and queries one matrix by one vector per shard: with spinning threads
on two busy cores, embedding ran 3-4x slower, and a 2,000-row product took 22 ms instead
of 0.1 ms (bench/ann.py). numpy has no API for this and OPENBLAS_NUM_THREADS is read only
when numpy is imported, so threadpoolctl finds the BLAS library numpy loaded (OpenBLAS,
MKL, BLIS, on any system) and calls its own setter.

A command that answers and exits (a query) knows before numpy is imported that it wants
one thread: it says so in the environment, which the BLAS library reads when numpy loads
it (`one_blas_thread_from_start`), and skips threadpoolctl, whose import and scan of the
loaded libraries cost a query ~10 ms of CPU (issue 40).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                "BLIS_NUM_THREADS")
_from_start = False
"""numpy was imported after `one_blas_thread_from_start` asked for one thread."""


def one_blas_thread_from_start() -> None:
    """Before numpy is imported: ask its BLAS for one thread through the environment
    (children inherit it: git needs no BLAS, a build's workers want one thread too). Does
    nothing once numpy is loaded, or when the environment asks for other counts: those
    are limited by `one_blas_thread` as before."""
    global _from_start
    if "numpy" in sys.modules or any(os.environ.get(v, "1") != "1" for v in _THREAD_VARS):
        return
    for name in _THREAD_VARS:
        os.environ[name] = "1"
    _from_start = True


def one_blas_thread() -> None:
    """Limit the BLAS libraries loaded in this process to one thread."""
    if _from_start:  # loaded with one thread already
        return
    from threadpoolctl import threadpool_limits  # with numpy only: queries, builds

    threadpool_limits(1, user_api="blas")


@contextmanager
def blas_single_threaded() -> Iterator[None]:
    """`one_blas_thread` for a block of this process, then the old setting back."""
    if _from_start:
        yield
        return
    from threadpoolctl import threadpool_limits  # with numpy only: queries, builds

    with threadpool_limits(1, user_api="blas"):
        yield
