"""What this commit changes: `git diff --cached -M` read directly.

pre-commit never passes deleted files to a hook and skips a hook with no matching
files, so a rename or deletion that breaks links in *other* notes is invisible to a
hook that only looks at its arguments. The hook therefore runs with `always_run`
and reads the staged change set itself.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from kbase_ci.errors import GitError
from kbase_ci.git import process
from kbase_ci.git.listing import GITLINK, LS_FILES, ls_tree
from kbase_ci.git.process import git, git_text, prefetch
from kbase_ci.git.repo import REPO_DIRS, head_commit
from kbase_ci.parsed import RepoPath
from kbase_ci.typedjson import Record, json_field

ChangeKind = Literal["added", "modified", "deleted", "renamed", "copied", "type-changed"]
_KINDS: dict[str, ChangeKind] = {
    "A": "added", "M": "modified", "D": "deleted", "R": "renamed", "C": "copied",
    "T": "type-changed",
}


class FileChange(Record):
    """One staged change of a file, as `git diff --cached --raw -M` reports it."""

    kind: ChangeKind
    path: RepoPath
    """Path after the change (for deletions: the deleted path). Relative to the vault root."""
    old_path: RepoPath | None = None
    """Path before a rename or copy."""
    old_sha: str | None = json_field(default=None, compare=False, hidden=True)
    """Blob id before the change (at `old_path` for a rename or copy), when git's diff
    gave it; None for an addition or a submodule. Not part of a change's identity (a
    report read back from JSON has none), so equality ignores it."""


_NO_SHA = frozenset({"0" * 40, "0" * 64})


def _diff_command(args: list[str]) -> list[str]:
    # --raw rather than --name-status: the same records plus the blob ids before the
    # change, so the HEAD versions of changed notes need no `ls-tree` (a process).
    return ["diff", *args, "-M", "--raw", "--no-abbrev", "-z", "--relative", "--", "."]


def _diff(root: Path, args: list[str]) -> list[FileChange]:
    out = git(_diff_command(args), root)
    fields = [f.decode("utf-8", "surrogateescape") for f in out.split(b"\0")]
    changes: list[FileChange] = []
    i = 0
    while i < len(fields) and fields[i]:
        # ":<old mode> <new mode> <old sha> <new sha> <status>", then one or two paths
        old_mode, _new_mode, old_sha, _new_sha, status = fields[i][1:].split(" ")
        kind = _KINDS.get(status[0])
        sha = None if old_sha in _NO_SHA or old_mode == GITLINK else old_sha
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
    prefetch(root, [REPO_DIRS, _diff_command(["--cached", "-B", "HEAD"]), LS_FILES])


def drop_hook_git() -> int:
    """Stop what `prefetch_hook_git` started and nothing asked for; how many there were."""
    return process.drop_prefetched()


def staged_changes(root: Path, *, break_rewrites: bool = False,
                   base: str | None = None) -> list[FileChange]:
    """Staged changes under `root` against HEAD (against the empty tree before the first
    commit), or against commit `base` (`kbase fix --base`: what was committed since, and
    staged).

    `break_rewrites` adds `-B`, so a path whose content was wholly replaced can pair
    up as a rename (`a -> b, b -> a` in one commit shows as two renames, not two edits).
    """
    args = ["--cached", *(["-B"] if break_rewrites else [])]
    if base is not None:
        return _diff(root, [*args, base])
    try:
        # Against HEAD straight away: asking whether HEAD exists first costs a process.
        return _diff(root, [*args, "HEAD"])
    except GitError:
        if head_commit(root) is not None:
            raise
    return _diff(root, [*args, _empty_tree(root)])


def changes_between(root: Path, base: str, head: str) -> list[FileChange]:
    """Changes from commit `base` to commit `head` (for PR reports)."""
    return _diff(root, [base, head])


def _empty_tree(root: Path) -> str:
    return git_text(["hash-object", "-t", "tree", "/dev/null"], root)


def old_blob_shas(root: Path, rev: str, paths: list[str]) -> dict[str, str]:
    """Blob ids of `paths` (vault-relative) at `rev`; paths missing there are left out."""
    if not paths:
        return {}
    # ls-tree reads pathspecs and prints paths relative to the current directory. Each
    # pathspec is matched against every entry, so for many paths listing all is faster.
    wanted = set(paths)
    return {e.path: e.sha for e in ls_tree(root, rev, paths if len(paths) <= 64 else (),
                                           check=False)
            if e.mode != GITLINK and e.path in wanted}


def staged_paths(repo: Path) -> list[str]:
    """Repository-relative paths the index adds, modifies, renames or copies (what
    pre-commit passes to hooks), as git lists them."""
    out = git(["diff", "--cached", "--name-only", "-z", "--diff-filter=ACMRTUXB"], repo)
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def added_lines(root: Path, base: str, head: str, path: str) -> frozenset[int]:
    """Head-side line numbers `git diff base head` adds or rewrites in `path`."""
    out = git_text(["diff", "-U0", "--no-color", "--no-ext-diff", "--relative", base,
                    head, "--", f"./{path}"], root, check=False)
    lines: set[int] = set()
    for m in _HUNK.finditer(out):
        start, count = int(m.group(1)), int(m.group(2) or 1)
        lines.update(range(start, start + count))
    return frozenset(lines)
