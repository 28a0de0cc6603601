"""How kbase asks Python's cyclic garbage collector to behave: off in short commands,
less often in bulk work.

The collector runs every 700 net container allocations and then walks every object of
the generations it collects. An index build decodes and creates a few hundred thousand
lists, tuples and records that live until the build ends, and nearly none of them form
cycles (reference counting frees them), so at the default threshold the collector kept
re-walking a growing heap: ~1 s of a 2.7 s one-note incremental build at 10k notes.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

BULK_THRESHOLD = 50_000
"""First-generation threshold during bulk work (Python's default is 700)."""


_froze = False
"""Whether the objects alive when the last `collector_off` block ended are frozen by it."""


@contextmanager
def collector_off(last: bool = True) -> Iterator[None]:
    """No cyclic collection while the block runs (a command that answers and exits: its
    objects are freed by reference counting, and the collector would only walk them again,
    ~8 ms of a 140 ms hook run); the collector's previous state comes back after.

    Turning it back on must not walk them either. Every container allocated meanwhile
    counts towards the youngest generation, so the first allocation after `gc.enable()`
    collected all of them (10% of a cold `check --all` of a 6.6k-note vault), and
    interpreter exit collects the oldest generation again. So the survivors are frozen
    first (`gc.freeze`: moved aside in O(1), counts reset), which the process's exit
    never walks; the next block gives them back to the collector (`gc.unfreeze`), so a
    caller running many commands in one process (the tests) still has its cycles
    collected. Nothing is frozen when something else froze objects already, nor when
    the block is not the process's last work (`last` false: a caller running commands in
    one process, as the tests' in-process CLI does): the first allocation after the
    block then collects what the block left in cycles, as without this module; frozen,
    those cycles (an SQLite connection held in one is an open file) would never be
    collected while later blocks keep the collector off."""
    global _froze
    if _froze:
        _froze = False
        gc.unfreeze()
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            if last and gc.get_freeze_count() == 0:
                gc.freeze()
                _froze = True
            gc.enable()


@contextmanager
def bulk_allocations() -> Iterator[None]:
    """Collect cycles less often while the block runs; the previous thresholds come back
    when it ends. Cycles are still collected, so memory stays bounded."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], BULK_THRESHOLD), old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)
