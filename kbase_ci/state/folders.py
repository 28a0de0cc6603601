"""Temp folders and temp files: the only code in kbase that makes them.

- `make_temp_dir`: a folder beside an index, hidden from git from its first byte (its
  `.gitignore` is written before anything else) and marked with its own inode
  (`TEMP_MARK`), so a committed look-alike (`.kbase.tmp-1/`) is never taken for one and
  deleted (`is_our_temp`);
- `fresh_dir`: an unmarked, uniquely named folder inside the git dir (git never looks
  there), for a branch written out before it is renamed into place;
- `Scratch`: a marked folder in the system temp folder for an index a query builds for itself,
  removed when dropped or at exit, or by the next one when its process was killed;
- `spool`: an anonymous temp file (deleted when closed) to feed a process.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import IO

from kbase_ci.state.bounded import read_input
from kbase_ci.state.files import create_new

TEMP_MARK = ".kbase-temp"
"""A temp folder's marker file: the folder's own inode number, which a folder that came
from a commit or an archive cannot know in advance."""


GIT_HIDE = ".gitignore"
"""In every temp, old or retired folder kbase makes beside an index: `*` makes git ignore
the folder, this file included, so `git add -A` never stages one (a `.kbase/` entry in
the repository's .gitignore does not match `.kbase.retired-1-0/`). Taken out before a
folder becomes the index; never in a manifest."""


def hide_from_git(folder: Path) -> None:
    """Make git ignore `folder` and everything in it (`GIT_HIDE`)."""
    with contextlib.suppress(FileExistsError):
        create_new(folder / GIT_HIDE, b"*\n")


def make_temp_dir(path: Path) -> Path:
    """Create the folder `path` (which must not exist) as this process's temp folder,
    hidden from git before anything is written into it. A folder that cannot be hidden
    (a full disk) is removed again: git never sees one of kbase's temp folders."""
    os.mkdir(path)
    try:
        hide_from_git(path)
        create_new(path / TEMP_MARK, f"{os.lstat(path).st_ino}\n".encode())
    except BaseException:
        import shutil  # with bz2 and lzma, ~2 ms: not on a hook run's path (git.objects)

        shutil.rmtree(path, ignore_errors=True)
        raise
    return path


def fresh_dir(base: Path, prefix: str) -> Path:
    """A new, empty, uniquely named folder in `base` (created with mode 0700)."""
    import tempfile  # only a command that writes a branch out pays for this import

    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))


def process_alive(pid: int) -> bool:
    """Whether process `pid` still runs (ours counts): its temp folders are in use."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:  # Windows: no such process (signal 0 is not a probe there)
        return False
    return True


def is_our_temp(path: Path) -> bool:
    """Whether `path` is a temp folder `make_temp_dir` made (of any process)."""
    try:
        st, mark = os.lstat(path), os.lstat(path / TEMP_MARK)
        if not (stat.S_ISDIR(st.st_mode) and stat.S_ISREG(mark.st_mode)):
            return False
        # A committed look-alike's mark may be anything: a number is at most 64 bytes.
        mark_bytes = read_input(path / TEMP_MARK, 64, follow_links=False)
        return mark_bytes.strip() == str(st.st_ino).encode()
    except OSError:  # InputRefused included
        return False


SCRATCH_PREFIX = "kbase-query-"
"""Names of `Scratch` folders in the system temp folder: `kbase-query-PID-RANDOM`."""


class Scratch:
    """A marked temp folder in the system temp folder (state: its finalizer), removed
    when the object holding it is dropped or the process exits (SIGTERM included:
    cli.main turns it into an exit). One left by a process killed outright (SIGKILL)
    is removed by the next `Scratch`."""

    def __init__(self) -> None:
        import secrets
        import shutil
        import tempfile
        import weakref

        base = Path(tempfile.gettempdir())
        for entry in base.glob(f"{SCRATCH_PREFIX}*"):
            pid = entry.name[len(SCRATCH_PREFIX):].partition("-")[0]
            if pid.isdigit() and not process_alive(int(pid)) and is_our_temp(entry):
                shutil.rmtree(entry, ignore_errors=True)
        self.path = make_temp_dir(base / f"{SCRATCH_PREFIX}{os.getpid()}-"
                                         f"{secrets.token_hex(6)}")
        self.cleanup = weakref.finalize(self, shutil.rmtree, str(self.path), True)


def spool() -> IO[bytes]:
    """An anonymous temp file for writing then reading back (gone when closed)."""
    import tempfile  # only a command that streams many blobs from git pays for this

    return tempfile.TemporaryFile()
