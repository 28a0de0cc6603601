"""How many threads numpy's BLAS may use here: one, for kbase's small matrix products.

OpenBLAS threads spin while they wait. Index builds multiply many small matrices in two
worker processes, and queries one matrix by one vector per shard: with spinning threads
on two busy cores, embedding ran 3-4x slower, and a 2,000-row product took 22 ms instead
of 0.1 ms (bench/ann.py). numpy has no API for this and OPENBLAS_NUM_THREADS is read only
when numpy is imported, so threadpoolctl finds the BLAS library numpy loaded (OpenBLAS,
MKL, BLIS, on any system) and calls its own setter.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


def one_blas_thread() -> None:
    """Limit the BLAS libraries loaded in this process to one thread."""
    from threadpoolctl import threadpool_limits  # with numpy only: queries, builds

    threadpool_limits(1, user_api="blas")


@contextmanager
def blas_single_threaded() -> Iterator[None]:
    """`one_blas_thread` for a block of this process, then the old setting back."""
    from threadpoolctl import threadpool_limits  # with numpy only: queries, builds

    with threadpool_limits(1, user_api="blas"):
        yield
