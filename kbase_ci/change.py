"""What this commit changes: `git diff --cached -M` read directly.

pre-commit never passes deleted files to a hook and skips a hook with no matching
files, so a rename or deletion that breaks links in *other* notes is invisible to a
hook that only looks at its arguments. The hook therefore runs with `always_run`
and reads the staged change set itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from . import gitio
from .errors import GitError

ChangeKind = Literal["added", "modified", "deleted", "renamed", "copied", "type-changed"]
_KINDS: dict[str, ChangeKind] = {
    "A": "added", "M": "modified", "D": "deleted", "R": "renamed", "C": "copied",
    "T": "type-changed",
}


@dataclass(frozen=True, slots=True)
class FileChange:
    """One staged change of a file, as `git diff --cached --raw -M` reports it."""

    kind: ChangeKind
    path: str
    """Path after the change (for deletions: the deleted path). Relative to the vault root."""
    old_path: str | None = None
    """Path before a rename or copy."""
    old_sha: str | None = field(default=None, compare=False)
    """Blob id before the change (at `old_path` for a rename or copy), when git's diff
    gave it; None for an addition or a submodule. Not part of a change's identity (a
    report read back from JSON has none), so equality ignores it."""


_NO_SHA = frozenset({"0" * 40, "0" * 64})


def _diff_command(args: list[str]) -> list[str]:
    # --raw rather than --name-status: the same records plus the blob ids before the
    # change, so the HEAD versions of changed notes need no `ls-tree` (a process).
    return ["diff", *args, "-M", "--raw", "--no-abbrev", "-z", "--relative", "--", "."]


def _diff(root: Path, args: list[str]) -> list[FileChange]:
    out = gitio.git(_diff_command(args), root)
    fields = [f.decode("utf-8", "surrogateescape") for f in out.split(b"\0")]
    changes: list[FileChange] = []
    i = 0
    while i < len(fields) and fields[i]:
        # ":<old mode> <new mode> <old sha> <new sha> <status>", then one or two paths
        old_mode, _new_mode, old_sha, _new_sha, status = fields[i][1:].split(" ")
        kind = _KINDS.get(status[0])
        sha = None if old_sha in _NO_SHA or old_mode == "160000" else old_sha
        if status[0] in "RC":
            old, new = fields[i + 1], fields[i + 2]
            i += 3
            if kind is not None:
                changes.append(FileChange(kind, new, old, sha))
            continue
        path = fields[i + 1]
        i += 2
        if kind is not None:  # U (unmerged) and X are not changes we can judge
            changes.append(FileChange(kind, path, None, sha))
    return changes


def prefetch_hook_git(root: Path) -> None:
    """Start the git processes a `check --staged` run in `root` asks first (the repository
    folders, the staged diff, the listing), so they run while Python imports the rest."""
    gitio.prefetch(root, [gitio.REPO_DIRS, _diff_command(["--cached", "-B", "HEAD"]),
                          gitio.LS_FILES])


def staged_changes(root: Path, *, break_rewrites: bool = False) -> list[FileChange]:
    """Staged changes under `root` against HEAD (against the empty tree before the first commit).

    `break_rewrites` adds `-B`, so a path whose content was wholly replaced can pair
    up as a rename (`a -> b, b -> a` in one commit shows as two renames, not two edits).
    """
    args = ["--cached", *(["-B"] if break_rewrites else [])]
    try:
        # Against HEAD straight away: asking whether HEAD exists first costs a process.
        return _diff(root, [*args, "HEAD"])
    except GitError:
        if gitio.head_commit(root) is not None:
            raise
    return _diff(root, [*args, _empty_tree(root)])


def changes_between(root: Path, base: str, head: str) -> list[FileChange]:
    """Changes from commit `base` to commit `head` (for PR reports)."""
    return _diff(root, [base, head])


def _empty_tree(root: Path) -> str:
    return gitio.git_text(["hash-object", "-t", "tree", "/dev/null"], root)


def old_blob_shas(root: Path, rev: str, paths: list[str]) -> dict[str, str]:
    """Blob ids of `paths` (vault-relative) at `rev`; paths missing there are left out."""
    if not paths:
        return {}
    # ls-tree reads pathspecs and prints paths relative to the current directory. Each
    # pathspec is matched against every entry, so for many paths listing all is faster.
    specs = [f"./{p}" for p in paths] if len(paths) <= 64 else ["."]
    out = gitio.git(["ls-tree", "-r", "-z", rev, "--", *specs], root, check=False)
    wanted = set(paths)
    shas: dict[str, str] = {}
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, raw = rec.partition(b"\t")
        _mode, kind, sha = meta.decode().split(" ")
        path = raw.decode("utf-8", "surrogateescape")
        if kind == "blob" and path in wanted:
            shas[path] = sha
    return shas
