"""What git history says about a note: when it was committed, and what its change deleted.

A handover may list a file it deleted, so "exists at HEAD" is not enough: the file may
instead be deleted *in the same change*. Which change that is depends on how the note
is being read: the staged commit (pre-commit), the uncommitted work (the note differs
from HEAD), or the last commit that touched it.
"""

from __future__ import annotations

from pathlib import Path

from kbase_ci.git.diff import FileChange, staged_changes
from kbase_ci.git.process import git, git_text
from kbase_ci.git.repo import head_commit, toplevel


def deleted_paths(changes: list[FileChange]) -> frozenset[str]:
    """Paths a change set removes: deletions, and the old side of renames."""
    out = {c.path for c in changes if c.kind == "deleted"}
    out |= {c.old_path for c in changes if c.kind == "renamed" and c.old_path}
    return frozenset(out)


def deleted_with(root: Path, note: str, *, staged: bool) -> frozenset[str]:
    """Paths (vault-relative) deleted by the change that wrote `note`."""
    if toplevel(root) is None:
        return frozenset()
    if staged:
        return deleted_paths(staged_changes(root))
    head = head_commit(root)
    if head is None:
        return frozenset()
    dirty = git(["status", "--porcelain", "-z", "--", note], root, check=False)
    if dirty.strip(b"\0"):
        return _deleted_from(root, ["diff", "HEAD"])
    last = git_text(["log", "-1", "--format=%H", "--", note], root, check=False)
    if not last:
        return frozenset()
    return _deleted_from(root, ["diff-tree", "--no-commit-id", "--root", "-r", last])


def _deleted_from(root: Path, args: list[str]) -> frozenset[str]:
    out = git([*args, "--no-renames", "--name-status", "-z", "--relative", "--", "."],
           root, check=False)
    fields = [f.decode("utf-8", "surrogateescape") for f in out.split(b"\0")]
    return frozenset(fields[i + 1] for i in range(0, len(fields) - 1, 2)
                     if fields[i] == "D")


def commit_time(root: Path, path: str) -> int | None:
    """Unix time of the last commit touching `path`; None when it was never committed."""
    if toplevel(root) is None:
        return None
    out = git_text(["log", "-1", "--format=%ct", "--", path], root, check=False)
    return int(out) if out.isdigit() else None
