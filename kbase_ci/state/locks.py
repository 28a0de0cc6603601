"""Locks between kbase processes: the only code in kbase that takes them.

- `exclusive(path)`: one holder at a time (one build of a scope, one download of a
  model), through the `filelock` library: `flock` on POSIX, `LockFileEx` on Windows,
  released by the system when the holder dies, so a killed process never leaves a lock
  behind. The lock file stays (deleting it would race with a waiter), and a file system
  without real locks is an error rather than a silent marker file that outlives a
  killed holder.
- `share(fd)` / `others_hold(fd)`: the readers' side of a folder generation
  (kbase_ci.state.generations): many readers hold a shared lock on one of its files, a
  writer asks without waiting whether any still does. POSIX `flock` only: where the
  system has none (Windows) `share` says so and generations fall back to checking
  (see generations). filelock has no shared lock on a file of the generation itself
  (its `ReadWriteLock` is a SQLite file of its own, which would have to live inside the
  index folder and break its listing, or outside it and not follow its renames).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kbase_ci.errors import UsageError


@contextmanager
def exclusive(path: Path, *, timeout: float | None = None, what: str = "") -> Iterator[None]:
    """Hold the lock file `path` (created with its folder if missing) for the block;
    waits for another holder, at most `timeout` seconds (None: as long as it takes), then
    UsageError naming `what`."""
    # Lazy: filelock costs ~50 ms to import, paid only by a command that locks.
    from filelock import FileLock, Timeout

    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, timeout=-1 if timeout is None else timeout,
                    preserve_lock_file=True)
    try:
        lock.acquire()
    except Timeout:
        raise UsageError(f"{what or path}: another kbase process held the lock {path} "
                         f"for more than {timeout:.0f} s; try again") from None
    try:
        yield
    finally:
        lock.release()


def share(fd: int) -> bool:
    """Take a shared lock on the open file `fd` (waits while a writer holds it
    exclusively); False when this system has no `flock` (nothing taken)."""
    try:
        import fcntl  # POSIX only
    except ImportError:
        return False
    fcntl.flock(fd, fcntl.LOCK_SH)
    return True


def others_hold(fd: int) -> bool:
    """Whether another open file (a reader) holds a lock on the file `fd` is open on.
    When none does, this one now holds it exclusively until `fd` is closed. Without
    `flock` (Windows): False, no reader can be seen."""
    try:
        import fcntl  # POSIX only
    except ImportError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    return False
