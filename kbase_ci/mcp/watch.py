"""Whether anything in the work tree changed since the last look, without statting every
file: Linux inotify on each folder (outside `.git` and `.kbase`).

A warm call otherwise pays one `git diff-files` (every tracked file stat'ed: ~15 ms CPU
at 10k notes) only to learn that nothing moved. With a watch, a quiet work tree costs one
non-blocking read. Any event, a queue overflow, or a watch that could not be added makes
`changed()` say True, and the caller falls back to git's answer: a watch can only save
work, never hide a change. Elsewhere than Linux `Watch.start` returns None.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from pathlib import Path

_SKIP = {".git", ".kbase"}
# IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE |
# IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
_MASK = 0x002 | 0x004 | 0x008 | 0x040 | 0x080 | 0x100 | 0x200 | 0x400 | 0x800
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC


class Watch:
    """An inotify descriptor with a watch on every folder of a work tree (state: the
    descriptor)."""

    def __init__(self, root: Path, libc: ctypes.CDLL, fd: int) -> None:
        self.root = root
        self._libc = libc
        self._fd = fd
        self._complete = self._add_all()

    @classmethod
    def start(cls, root: Path) -> Watch | None:
        if not sys.platform.startswith("linux"):
            return None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = int(libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC))
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        return cls(root, libc, fd)

    def _add_all(self) -> bool:
        """Watch every folder (again: adding a watched folder is a no-op, and a folder
        deleted and made anew needs a new watch); False when one could not be watched."""
        ok = True
        for dirpath, dirnames, _files in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d not in _SKIP]
            if self._libc.inotify_add_watch(self._fd, os.fsencode(dirpath), _MASK) < 0:
                ok = False
        return ok

    def changed(self) -> bool:
        """True when something happened since the last call (or cannot be ruled out).
        New folders are watched from now on."""
        seen = False
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                return True
            if not data:
                break
            seen = True
        if seen or not self._complete:
            # Cheap next to the rebuild this triggers; also covers IN_Q_OVERFLOW.
            self._complete = self._add_all()
            return True
        return False

    def close(self) -> None:
        os.close(self._fd)
