"""Where kbase may write, and how: the one module every writer goes through.

A repository is untrusted input. A committed symbolic link (`.kbase -> ..`, a `handovers`
folder pointing at `$HOME`), a submodule, or a folder of someone's files where an index
is expected must never turn a kbase command into a write or a delete outside what kbase
owns. So every writer asks here first:

- `confine`: a repository path is safe to write: no `..`, no `.git`, no component that
  is a symbolic link, none inside a submodule or another repository, none inside kbase's
  own index folders (`.kbase`, `.kbase-slice-K-of-N`, their temp and retired copies);
- `links_between`: the first symbolic link on the way to a path inside the repository;
- `foreign_entry`: what in a folder kbase is about to replace or delete it does not own
  (`entries`: what is there).

How a file is then written (atomically, compare-and-swap, new only), temp folders, and
folder generations readers hold while a writer swaps a new one in: kbase_ci.state.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Collection
from pathlib import Path

from kbase_ci.errors import UnsafePathError

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


def entries(folder: Path) -> dict[str, os.stat_result]:
    """Every entry under `folder` but its real subfolders: POSIX path relative to it ->
    its `lstat`, in `foreign_entry`'s order (a folder's files and its symbolic links to
    folders, sorted, then each real subfolder's, in name order). One `scandir` per folder:
    an index check on every query used to stat each file three times through `Path`s.
    Links are never followed; a folder that cannot be read is skipped, as `os.walk` does."""
    out: dict[str, os.stat_result] = {}
    _walk(str(folder), "", out)
    return out


def _walk(path: str, prefix: str, out: dict[str, os.stat_result]) -> None:
    try:
        with os.scandir(path) as it:
            found = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    files: list[os.DirEntry[str]] = []
    linked: list[os.DirEntry[str]] = []
    real: list[os.DirEntry[str]] = []
    for entry in found:
        try:  # a link to a folder counts as a folder, as in `os.walk`, never entered
            folder = entry.is_dir()
        except OSError:
            folder = False
        (files if not folder else linked if entry.is_symlink() else real).append(entry)
    for entry in files + linked:
        out[prefix + entry.name] = entry.stat(follow_symlinks=False)
    for entry in real:
        _walk(entry.path, f"{prefix}{entry.name}/", out)


def foreign_entry(folder: Path, owned: Callable[[str], bool]) -> str | None:
    """The first entry under `folder` (POSIX path relative to it) that is a symbolic
    link, not a plain file or folder, or a file `owned` does not claim; None when kbase
    owns everything there. Links are never followed."""
    return foreign_in(entries(folder), owned)


def foreign_in(found: dict[str, os.stat_result], owned: Callable[[str], bool]) -> str | None:
    """`foreign_entry` of a folder whose `entries` were read already."""
    return next((rel for rel, st in found.items()
                 if not stat.S_ISREG(st.st_mode) or not owned(rel)), None)
