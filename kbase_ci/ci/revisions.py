"""Which two commits a PR report compares, with the objects fetched when a clone lacks them.

The head is the PR's head commit (not the synthetic merge commit `GITHUB_SHA` names),
so links in the report point at lines the author wrote. The base is the merge base of
the head and the base branch's tip: what the PR changed, not what landed on the base
branch since it was opened. A shallow checkout is deepened once to find it.
"""

from __future__ import annotations

from pathlib import Path

from kbase_ci.errors import UsageError
from kbase_ci.git import repo as git_repo
from kbase_ci.git.indexbranch import fetch_commit


def commit_of(repo: Path, rev: str) -> str:
    sha = git_repo.rev_commit(repo, rev)
    if not sha:
        raise UsageError(f"not a commit in this repository: {rev}")
    return sha


def ensure_commit(repo: Path, sha: str, remote: str = "origin") -> None:
    if git_repo.has_commit(repo, sha):
        return
    if not git_repo.has_remote(repo, remote) or not fetch_commit(repo, remote, sha):
        raise UsageError(f"commit {sha[:12]} is not in this clone and could not be fetched "
                         f"from {remote!r}")


def merge_base(repo: Path, a: str, b: str, remote: str = "origin") -> str:
    for attempt in (1, 2):
        found = git_repo.merge_base(repo, a, b)
        if found is not None:
            return found
        if attempt == 1 and git_repo.is_shallow(repo):
            git_repo.unshallow(repo, remote)
            continue
        break
    raise UsageError(f"no merge base of {a[:12]} and {b[:12]}; check out with "
                     "`fetch-depth: 0` so the history is there")


def pr_range(repo: Path, base_tip: str, head: str, remote: str = "origin") -> tuple[str, str]:
    """(merge base, head) as full commit ids."""
    ensure_commit(repo, head, remote)
    ensure_commit(repo, base_tip, remote)
    return merge_base(repo, base_tip, head, remote), head
