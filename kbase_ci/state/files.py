"""Files and folders renamed into place: the only code in kbase that renames.

- `write_atomic`: a file replaced whole through a temp file in the same folder (flushed
  and fsynced before the rename, so a crash leaves the old file or the new one); with
  `expect`, only if it still holds what was read (compare-and-swap), and a write that
  lands on the old file during the rename is kept beside it, never lost;
- `create_new`: a new file that may not exist yet, not even as a dangling link;
- `replace`: one rename (`os.replace`: atomic within a file system), for a folder built
  beside its final name or a file set aside;
- `exchange`: two folders swapped in one step where the system can (Linux
  `renameat2(RENAME_EXCHANGE)`); elsewhere the caller renames the old one aside first.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from pathlib import Path

from kbase_ci.errors import ChangedError, UnsafePathError

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def replace(src: Path, dst: Path) -> None:
    """Rename `src` to `dst` in one step (`dst`, if it exists, must be a file or an
    empty folder; it is replaced)."""
    os.replace(src, dst)


def write_atomic(path: Path, data: bytes, *, expect: bytes | None = None) -> None:
    """Replace `path` with `data` through a temp file in the same folder: readers see the
    old file or the new one, never half of one. Keeps the file mode. With `expect` (the
    bytes the caller read and edited), ChangedError instead when the file holds anything
    else now: a concurrent edit is never overwritten."""
    import tempfile  # only rewriting commands pay for this import

    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise UnsafePathError(f"{path}: not a regular file (a symbolic link?); not "
                              "replacing it")
    if expect is not None and st is None:
        raise ChangedError(f"{path}: deleted since kbase read it; not written")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".kbase-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        if expect is None:
            os.replace(tmp, path)
        else:
            _swap_if_unchanged(path, Path(tmp), expect)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _swap_if_unchanged(path: Path, tmp: Path, expect: bytes) -> None:
    """Compare, then rename. The old file stays reachable under a second name until the
    rename is done, so a write that lands on it in between (an appender that had it open)
    is kept as `NAME.kbase-conflict-PID` and reported, not lost."""
    keep: Path | None = path.with_name(f".{path.name}.kbase-was-{os.getpid()}")
    assert keep is not None
    try:
        os.link(path, keep, follow_symlinks=False)
    except OSError:  # no hard links here: still compared, a racing write is only reported
        keep = None
    try:
        with open(keep or path, "rb") as old:
            before = os.fstat(old.fileno())
            now = old.read()
            if now != expect or before.st_size != len(now) or \
                    os.lstat(path).st_ino != before.st_ino:
                raise ChangedError(f"{path}: changed since kbase read it; not rewritten "
                                   "(run the command again)")
            os.replace(tmp, path)
            after = os.fstat(old.fileno())
    except BaseException:
        if keep is not None:
            with contextlib.suppress(OSError):
                os.unlink(keep)
        raise
    if (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns):
        if keep is not None:
            os.unlink(keep)
        return
    if keep is None:
        raise ChangedError(f"{path}: written to by another program while kbase replaced "
                           "it; check its content")
    conflict = path.with_name(f"{path.name}.kbase-conflict-{os.getpid()}")
    os.replace(keep, conflict)
    raise ChangedError(f"{path}: written to by another program while kbase replaced it; "
                       f"that version is kept as {conflict.name}")


def create_new(path: Path, data: bytes) -> None:
    """Write a file that must not exist yet (not even as a dangling link): a race or a
    planted link cannot make this overwrite anything."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def exchange(a: Path, b: Path) -> bool:
    """Swap the folders `a` and `b` in one step; False (nothing done) where the system
    has no such call (anything but Linux 3.15+ with a file system that supports it)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # only a build that replaces an index swaps

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                   ctypes.c_uint]
    res = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(res == 0)
