"""Folders that writers replace whole (an index), and readers that must keep reading the
generation they opened while that happens.

A reader `Pinned` a folder: it holds a shared lock (kbase_ci.state.locks.share) on one
of its files, and reads the generation it opened in one of three ways (`via`):

- `proc` (Linux): through `/proc/self/fd/N/...`, a path that keeps naming the folder
  it opened after a rename; any library can be handed such a path;
- `dirfd` (other POSIX systems: macOS, the BSDs): `open` resolves names relative to
  the open folder (`openat`), which also keeps naming it; a path handed to a library
  (a graph file) is the folder's name, checked by `confirm` after the library opened it;
- `name` (no directory handles: Windows): every read goes by name and is checked by
  `confirm` afterwards.

`confirm` is sound because a generation never comes back: a writer builds each one in
a new folder and swaps it in, so if the name still holds the pinned generation after a
file was opened, it held it when the file was opened. A reader that finds the name
moved on gets ChangedError ("run it again"), never a mix of two generations.

A writer that swapped a new generation in calls `discard` on the old one: deleted when
no reader holds it, else renamed aside and deleted by a later build (`in_use` tells).
Locks die with their process, so a killed reader never keeps a generation alive.
Without `flock` (Windows) no reader can be seen: an old generation is deleted at once,
and its readers get ChangedError on their next read.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import BinaryIO, Literal

from kbase_ci.errors import ChangedError
from kbase_ci.state.files import replace
from kbase_ci.state.locks import others_hold, share

Via = Literal["proc", "dirfd", "name"]


def _best_via() -> Via:
    if Path("/proc/self/fd").is_dir():
        return "proc"
    return "dirfd" if os.open in os.supports_dir_fd else "name"


class Pinned:
    """One generation of a folder that writers replace whole (state: the open handles,
    and the identity of its `lock_name` file). `path` names it for reading (see the
    module docstring), `open` opens one of its files, `confirm` checks that reads by
    name got this generation, and `discard` does not delete it while it is pinned."""

    def __init__(self, folder: Path, lock_name: str, *, via: Via | None = None) -> None:
        self.folder, self._lock_name = folder, lock_name
        self.via: Via = via or _best_via()
        self._fds: tuple[int, int] = (-1, -1)
        for _ in range(20):  # a swap between open and lock: open the new generation
            dfd = -1 if self.via == "name" else \
                os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                lfd = os.open(lock_name if dfd >= 0 else folder / lock_name,
                              os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0),
                              dir_fd=dfd if dfd >= 0 else None)
            except BaseException:
                if dfd >= 0:
                    os.close(dfd)
                raise
            share(lfd)
            self._id = _identity(os.fstat(lfd))
            if self._at_name(dfd):
                break
            os.close(lfd)
            if dfd >= 0:
                os.close(dfd)
        else:
            raise ChangedError(f"{folder}: replaced again and again while being opened")
        self._fds = (dfd, lfd)
        self.path = Path(f"/proc/self/fd/{dfd}") if self.via == "proc" else folder

    def _at_name(self, dfd: int = -1) -> bool:
        """Whether the lock file is still this generation's (relative to the open
        folder when `dfd` is given, else under the folder's name)."""
        try:
            st = os.stat(self._lock_name, dir_fd=dfd, follow_symlinks=False) if dfd >= 0 \
                else os.stat(self.folder / self._lock_name, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return False  # deleted by a writer before the lock was taken
        return _identity(st) == self._id

    def lock_file(self) -> int:
        """The open lock file's descriptor (the manifest: read it from here)."""
        return self._fds[1]

    def open(self, rel: str) -> BinaryIO:
        """The file `rel` (a POSIX path below the folder) of this generation, for reading
        in binary mode."""
        if self.via == "dirfd":
            fd = os.open(rel, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0), dir_fd=self._fds[0])
            return os.fdopen(fd, "rb")
        fh = (self.path / rel).open("rb")
        if self.via == "name":
            try:
                self.confirm()
            except BaseException:
                fh.close()
                raise
        return fh

    def confirm(self) -> None:
        """ChangedError unless what was read by name since the pin came from this
        generation (a no-op through /proc, where `path` is the generation itself)."""
        if self.via != "proc" and not self._at_name():
            raise ChangedError(f"{self.folder}: replaced by a newer build while this "
                               "command read it; run it again")

    def close(self) -> None:
        for fd in self._fds:
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._fds = (-1, -1)

    def __del__(self) -> None:
        self.close()


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def in_use(folder: Path, lock_name: str) -> bool:
    """Whether some reader holds `folder` pinned."""
    try:
        fd = os.open(folder / lock_name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        return others_hold(fd)
    finally:
        os.close(fd)


def discard(folder: Path, lock_name: str, aside: Path) -> None:
    """Delete a replaced folder generation; one a reader still holds is renamed to
    `aside` instead, for the writer's next sweep."""
    import shutil  # only a writer discards: every query reads an index through this module

    try:
        fd = os.open(folder / lock_name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return
    try:
        if others_hold(fd):
            replace(folder, aside)
            return
        shutil.rmtree(folder, ignore_errors=True)  # locked: no reader can pin it now
    finally:
        os.close(fd)
