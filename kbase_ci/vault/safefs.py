"""Where kbase may write, and how: the one module every writer goes through.

A repository is untrusted input. A committed symbolic link (`.kbase -> ..`, a `handovers`
folder pointing at `$HOME`), a submodule, or a folder of someone's files where an index
is expected must never turn a kbase command into a write or a delete outside what kbase
owns. So every writer asks here first:

- `confine`: a repository path is safe to write: no `..`, no `.git`, no component that
  is a symbolic link, none inside a submodule or another repository, none inside kbase's
  own index folders (`.kbase`, `.kbase-slice-K-of-N`, their temp and retired copies);
- `write_atomic`: a file replaced whole through a temp file; with `expect`, only if it
  still holds what was read (compare-and-swap), and a write that lands on the old file
  during the rename is kept beside it, never lost;
- `create_new`: a new file that may not exist yet, not even as a dangling link;
- `foreign_entry`: what in a folder kbase is about to replace or delete it does not own;
- `make_temp_dir` / `is_our_temp`: a temp folder marked with its own inode, so a
  committed look-alike (`.kbase.tmp-1/`) is never taken for one and deleted;
- `generations`, beside it: a reader keeps the folder generation it opened while a writer
  swaps a new one in, and the old one is deleted only when no reader holds it.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Callable, Collection
from pathlib import Path

from kbase_ci.errors import ChangedError, UnsafePathError

INDEX_DIR = re.compile(r"\.kbase(?:-slice-\d+-of-\d+)?(?:\.(?:tmp|old|retired|seed)(?:-.*)?)?",
                       re.IGNORECASE)
"""Names of kbase's index folders (and their temp, aside, retired and seed copies): no
note is ever written into one, because the next build replaces it whole."""


def unsafe_part(rel: str) -> str | None:
    """Why the repository-relative POSIX path `rel` is unsafe by its spelling alone
    (None when it is fine): empty, absolute, `.`/`..`/empty components, NUL, `.git`, an
    index folder."""
    if not rel or rel.startswith("/") or "\0" in rel:
        return "is not a relative path"
    for part in rel.split("/"):
        if part in ("", ".", ".."):
            return "is not a plain relative path (it has an empty, `.` or `..` part)"
        if part.lower() == ".git":
            return "is inside a .git folder"
        if INDEX_DIR.fullmatch(part):
            return f"is inside kbase's index folder {part}/ (the next `kbase index` " \
                   "replaces it whole)"
    return None


def confine(root: Path, rel: str, *, gitlinks: Collection[str] = (),
            what: str = "path") -> Path:
    """`root / rel`, after checking that writing there stays inside `root`: UnsafePathError
    naming the first part that is a symbolic link, a file where a folder is needed, a
    submodule (`gitlinks`: their repository-relative paths) or another repository (a
    folder with its own `.git`). Parts that do not exist yet are created by the writer."""
    why = unsafe_part(rel)
    if why is not None:
        raise UnsafePathError(f"{what} {rel} {why}")
    parts = rel.split("/")
    for i in range(len(parts)):
        prefix = "/".join(parts[:i + 1])
        if prefix in gitlinks:
            raise UnsafePathError(f"{what} {rel} is inside the submodule {prefix}/; kbase "
                                  "does not write into another repository")
        full = root / prefix
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            continue  # created by the writer, below a folder already checked
        if stat.S_ISLNK(st.st_mode):
            raise UnsafePathError(f"{what} {rel}: {prefix} is a symbolic link; kbase does "
                                  "not write through links (they may lead outside the "
                                  "repository)")
        if i == len(parts) - 1:
            break
        if not stat.S_ISDIR(st.st_mode):
            raise UnsafePathError(f"{what} {rel}: {prefix} is not a folder")
        if os.path.lexists(full / ".git"):
            raise UnsafePathError(f"{what} {rel} is inside {prefix}/, which is a submodule "
                                  "or another repository; kbase does not write into one")
    return root / rel


def links_between(root: Path, path: Path) -> str | None:
    """The first component of `path` below `root` that is a symbolic link (None: none, or
    `path` is not below `root`). Paths the user typed outside the repository are theirs."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None
    cur = root
    for part in rel.parts:
        cur = cur / part
        try:
            if stat.S_ISLNK(os.lstat(cur).st_mode):
                return cur.relative_to(root).as_posix()
        except FileNotFoundError:
            return None
    return None


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


def foreign_entry(folder: Path, owned: Callable[[str], bool]) -> str | None:
    """The first entry under `folder` (POSIX path relative to it) that is a symbolic
    link, not a plain file or folder, or a file `owned` does not claim; None when kbase
    owns everything there. Links are never followed."""
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        base = Path(dirpath)
        dirnames.sort()
        for name in sorted(filenames) + [d for d in dirnames if (base / d).is_symlink()]:
            full = base / name
            rel = full.relative_to(folder).as_posix()
            mode = os.lstat(full).st_mode
            if not stat.S_ISREG(mode) or not owned(rel):
                return rel
    return None


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
    hidden from git."""
    os.mkdir(path)
    create_new(path / TEMP_MARK, f"{os.lstat(path).st_ino}\n".encode())
    hide_from_git(path)
    return path


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
    return True


def is_our_temp(path: Path) -> bool:
    """Whether `path` is a temp folder `make_temp_dir` made (of any process)."""
    try:
        st, mark = os.lstat(path), os.lstat(path / TEMP_MARK)
        if not (stat.S_ISDIR(st.st_mode) and stat.S_ISREG(mark.st_mode)):
            return False
        return (path / TEMP_MARK).read_bytes().strip() == str(st.st_ino).encode()
    except OSError:
        return False
