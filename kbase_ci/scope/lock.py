"""One build of a scope at a time: an advisory lock on `scopes/.NAME.lock`.

`fcntl.flock` is released by the kernel when the process dies, so a killed build never
leaves a lock behind; the file itself stays (deleting it would race with a waiter).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def scope_lock(scopes_dir: Path, name: str) -> Iterator[None]:
    import fcntl

    scopes_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(scopes_dir / f".{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
