"""Build beside the target, then swap: an interrupted or failed build never leaves a
half-written index where the previous good one was.

The new tree is written to `<target>.tmp-<pid>` in the same folder (same file system,
so renames are atomic). On Linux the two directories are exchanged in one
`renameat2(RENAME_EXCHANGE)` call; elsewhere the old one is renamed aside first, which
leaves a moment with no target, repaired by `recover` on the next build. Temp folders
of builds that were killed are removed once their process is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import sys
from pathlib import Path

_TMP = ".tmp-"
_OLD = ".old-"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def temp_dir_for(target: Path) -> Path:
    tmp = target.parent / f"{target.name}{_TMP}{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    return tmp


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover(target: Path) -> None:
    """Undo what killed builds left: restore a target renamed aside, drop dead temps."""
    parent = target.parent
    if not parent.is_dir():
        return
    for entry in sorted(parent.iterdir()):
        name = entry.name
        for marker in (_TMP, _OLD):
            if not name.startswith(target.name + marker):
                continue
            pid_text = name[len(target.name) + len(marker):]
            if not pid_text.isdigit() or _alive(int(pid_text)):
                continue
            if marker == _OLD and not target.exists():
                entry.rename(target)  # the swap died between its two renames
            else:
                shutil.rmtree(entry, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                   ctypes.c_uint]
    res = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(res == 0)


def swap_into(tmp: Path, target: Path) -> None:
    """Make `tmp` the new `target`; the old target (if any) is deleted afterwards."""
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise FileExistsError(f"{target} exists and is not a directory")
    if not target.exists():
        tmp.rename(target)
        return
    if _exchange(tmp, target):
        shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old index
        return
    aside = target.parent / f"{target.name}{_OLD}{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(aside)
    target.rename(aside)
    tmp.rename(target)
    shutil.rmtree(aside, ignore_errors=True)
