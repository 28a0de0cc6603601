"""Folders that writers replace whole (an index), and readers that must keep reading the
generation they opened while that happens.

A reader `Pinned` a folder: it holds an open handle on it (on Linux its files are then
read through `/proc/self/fd/N/...`, which keeps naming that generation after a rename)
and a shared `flock` on one of its files. A writer that swapped a new generation in calls
`discard` on the old one: deleted when no reader holds it, else renamed aside and
deleted by a later build (`in_use` tells). Locks die with their process, so a killed
reader never keeps a generation alive.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from kbase_ci.errors import ChangedError


class Pinned:
    """One generation of a folder that writers replace whole (state: an open handle on
    the folder and a shared lock on its `lock_name` file). `path` names the generation
    opened even after it is renamed away (Linux: through /proc/self/fd), and `discard`
    does not delete it while the lock is held."""

    def __init__(self, folder: Path, lock_name: str) -> None:
        import fcntl

        self._fds: tuple[int, int] = (-1, -1)

        for _ in range(20):  # a swap between open and lock: open the new generation
            dfd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                lfd = os.open(lock_name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0),
                              dir_fd=dfd)
            except BaseException:
                os.close(dfd)
                raise
            fcntl.flock(lfd, fcntl.LOCK_SH)
            try:
                alive = os.stat(lock_name, dir_fd=dfd, follow_symlinks=False).st_ino == \
                    os.fstat(lfd).st_ino
            except FileNotFoundError:
                alive = False  # deleted by a writer before the lock was taken
            if alive:
                break
            os.close(lfd)
            os.close(dfd)
        else:
            raise ChangedError(f"{folder}: replaced again and again while being opened")
        self.folder, self._fds = folder, (dfd, lfd)
        proc = Path(f"/proc/self/fd/{dfd}")
        self.path = proc if proc.is_dir() else folder

    def lock_file(self) -> int:
        """The open lock file's descriptor (the manifest: read it from here)."""
        return self._fds[1]

    def close(self) -> None:
        for fd in self._fds:
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._fds = (-1, -1)

    def __del__(self) -> None:
        self.close()


def in_use(folder: Path, lock_name: str) -> bool:
    """Whether some reader holds `folder` pinned."""
    import fcntl

    try:
        fd = os.open(folder / lock_name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def discard(folder: Path, lock_name: str, aside: Path) -> None:
    """Delete a replaced folder generation; one a reader still holds is renamed to
    `aside` instead, for the writer's next sweep."""
    import fcntl

    try:
        fd = os.open(folder / lock_name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.rename(folder, aside)
            return
        shutil.rmtree(folder, ignore_errors=True)  # locked: no reader can pin it now
    finally:
        os.close(fd)
