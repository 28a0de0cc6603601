"""What git lists: tracked files with their blob ids (the index, a commit's tree), and
which of them the work tree changed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kbase_ci.errors import GitError
from kbase_ci.git.process import Process, finish, git, run, start, stop


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One file of a git listing (`ls-files -s`, `ls-tree`): path, blob id and mode."""

    path: str
    """Relative to the directory ls-files ran in, POSIX."""
    sha: str
    mode: str


LS_FILES = ("ls-files", "-s", "-z", "--", ".")
SYMLINK, GITLINK = "120000", "160000"
"""Modes of a symbolic link and of a submodule entry (a commit id, not a file)."""


def ls_files_rows(cwd: Path) -> list[tuple[str, str, str]]:
    """`ls_files` as plain (path, sha, mode) tuples: the hook lists 10k files on every
    commit, and building 10k records costs more than running git (~10 ms)."""
    return ls_files_parse(git(LS_FILES, cwd))


def ls_files_parse(out: bytes) -> list[tuple[str, str, str]]:
    """The rows of `git ls-files -s -z` output (`LS_FILES`)."""
    # One decode and string slicing: a regex or per-record decode costs ~2x as much.
    # A record is "<mode> <sha> <stage>\t<path>"; the sha length depends on the hash.
    records = out.decode("utf-8", "surrogateescape").split("\0")
    records.pop()  # the text after the last NUL is empty
    rows: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for rec in records:
        tab = rec.index("\t")
        path = rec[tab + 1:]
        if rec[tab - 1] != "0":  # unmerged paths list stages 1-3; one entry is enough
            if path in seen:
                continue
            seen.add(path)
        rows.append((path, rec[7:tab - 2], rec[:6]))
    return rows


_LS_TREE_RECORD = re.compile(rb"(\d{6}) (\w+) ([0-9a-f]{40,64})\t([^\0]*)\0")


def ls_tree(cwd: Path, rev: str, paths: Sequence[str] = (), *,
            check: bool = True) -> list[IndexEntry]:
    """Files of commit (or tree) `rev` under `cwd` (or just `paths`), relative to `cwd`:
    blobs and submodules (mode 160000). `check=False`: nothing (not an error) when `rev`
    is not there."""
    spec = [f"./{p}" for p in paths] if paths else ["."]
    out = git(["ls-tree", "-r", "-z", rev, "--", *spec], cwd, check=check)
    return [IndexEntry(raw.decode("utf-8", "surrogateescape"), sha.decode(), mode.decode())
            for mode, kind, sha, raw in _LS_TREE_RECORD.findall(out) if kind == b"blob"
            or mode == b"160000"]


def untracked_files(cwd: Path) -> set[str]:
    """Paths (relative to `cwd`) of files git neither tracks nor ignores."""
    out = git(["ls-files", "--others", "--exclude-standard", "-z", "--", "."], cwd)
    return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}


def modified_in_worktree(cwd: Path) -> set[str]:
    """Tracked paths (relative to `cwd`) whose work-tree content differs from the index."""
    out = git(["diff-files", "-z", "--name-only", "--relative", "--", "."], cwd)
    return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}


# --branch for HEAD's commit id (`# branch.oid`); --no-ahead-behind: no history walk.
_STATUS = ("status", "--porcelain=v2", "-z", "--branch", "--no-ahead-behind",
           "--untracked-files=no", "--ignore-submodules=all", "--no-renames", "--", ".")


@dataclass(frozen=True, slots=True)
class Status:
    head: str | None
    """HEAD's commit id (None before the first commit)."""
    modified: set[str]
    """Paths whose work-tree content may differ from the index (modified, deleted or
    unmerged)."""
    changed: bool
    """Any tracked path differs from HEAD, staged or not."""
    untracked: set[str]
    """Files git does not track and does not ignore (when asked for)."""


def start_status(cwd: Path, *, write_index: bool = True, untracked: bool = False) -> Process:
    """Start `git status` for `worktree_status`. It costs what `git diff-files` costs
    (both stat every tracked file), and unlike it refreshes git's stat data and writes the
    index back when entries are "racily clean" (written in the same second as the index,
    as a fresh clone's are): otherwise every later `diff-files` hashes all of them again.
    `write_index=False` (`--no-optional-locks`) leaves the index file alone. `untracked`:
    list files git neither tracks nor ignores too (reading every folder: ~5 ms at 10k
    notes)."""
    args = _STATUS if not untracked else tuple(
        "--untracked-files=all" if a == "--untracked-files=no" else a for a in _STATUS)
    return start(args if write_index else ("--no-optional-locks", *args), cwd)


def worktree_status(proc: Process, prefix: str) -> Status:
    """From a `start_status` process, paths relative to the folder that is `prefix`
    (POSIX, ending in `/`, or "") below the repository root, as git names paths from the
    root in this format."""
    out = finish(proc, ("status",))
    head: str | None = None
    found: set[str] = set()
    untracked: set[str] = set()
    changed = False
    for rec in out.split(b"\0"):
        kind = rec[:2]
        if kind == b"# ":
            if rec.startswith(b"# branch.oid ") and rec[13:] != b"(initial)":
                head = rec[13:].decode()
            continue
        if kind == b"? ":
            path = rec[2:].decode("utf-8", "surrogateescape")
            if path.startswith(prefix):
                untracked.add(path[len(prefix):])
            continue
        if kind == b"1 ":  # "1 XY sub mH mI mW hH hI path"
            parts = rec.split(b" ", 8)
        elif kind == b"u ":  # "u XY sub m1 m2 m3 mW h1 h2 h3 path": a conflict
            parts = rec.split(b" ", 10)
        else:
            continue
        if len(parts) < 9:
            continue
        changed = True
        if kind == b"1 " and parts[1][1:2] == b".":
            continue  # staged only: the work tree has what the index has
        path = parts[-1].decode("utf-8", "surrogateescape")
        if path.startswith(prefix):
            found.add(path[len(prefix):])
    return Status(head, found, changed, untracked)


class WorktreeListing:
    """`git status`, started at once and collected when first asked, and `git ls-files`,
    run only when the rows are asked for: a query whose index is exactly the work tree
    reads only the status (listing tldr-pages' 38k files alongside cost each such query
    11 ms of CPU it threw away). State: the status process until collected."""

    def __init__(self, cwd: Path, *, write_index: bool = True, untracked: bool = False) -> None:
        self.cwd = cwd
        self._untracked, self._wrote = untracked, write_index
        self._status: Process | None = start_status(cwd, write_index=write_index,
                                                    untracked=untracked)

    def status(self, prefix: str) -> Status:
        """`worktree_status` of the started `git status` (asked once)."""
        proc, self._status = self._status, None
        if proc is None:
            raise RuntimeError("the status was already collected")
        try:
            return worktree_status(proc, prefix)
        except GitError:
            if not self._wrote:
                self.stop()
                raise
        except BaseException:
            self.stop()
            raise
        # A git dir git cannot write (a full disk, a read-only clone: `index.lock` write
        # error) fails the status that refreshes the index; one that leaves it alone
        # answers the same (issue 28: every query and check exited 2 on a full disk).
        try:
            return worktree_status(start_status(self.cwd, write_index=False,
                                                untracked=self._untracked), prefix)
        except BaseException:
            self.stop()
            raise

    def rows(self) -> list[tuple[str, str, str]]:
        """The `ls-files` rows."""
        return ls_files_rows(self.cwd)

    def stop(self) -> None:
        if self._status is not None:
            stop(self._status)
        self._status = None


def is_ignored(cwd: Path, rel: str) -> bool:
    """Whether `.gitignore` rules (or info/exclude) ignore `rel` below `cwd`."""
    got = git(["status", "--porcelain=v1", "--ignored=matching", "-z", "--", rel], cwd,
              check=False)
    return got.startswith(b"!! ")


def refresh_index(cwd: Path) -> None:
    """Refresh git's stat data, so later diffs compare content only where it may differ."""
    run(["update-index", "-q", "--refresh"], cwd)


def changed_since(cwd: Path, commit: str) -> list[str]:
    """Paths under `cwd` (relative to it) whose content differs from `commit`, staged or
    not, sorted. `git diff COMMIT` compares content (refreshing stale stat data in memory
    only) and sees files added to the index too."""
    out = git(["diff", "--no-ext-diff", "--no-renames", "--name-only", "-z", "--relative",
               commit, "--", "."], cwd)
    return sorted({p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p})


def added_or_deleted_since(cwd: Path, commit: str) -> list[str] | None:
    """Paths under `cwd` (relative to it) that git's index adds or drops against
    `commit` (committed or staged since; compares trees only, no work-tree stat),
    sorted; None when `commit` is not in this clone."""
    proc = run(["diff", "--cached", "--no-ext-diff", "--no-renames", "--name-only", "-z",
                "--diff-filter=AD", "--relative", commit, "--", "."], cwd)
    if proc.returncode != 0:
        return None
    return sorted({p.decode("utf-8", "surrogateescape") for p in proc.stdout.split(b"\0")
                   if p})
