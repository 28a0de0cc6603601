"""Which two commits a PR report compares, with the objects fetched when a clone lacks them.

The head is the PR's head commit (not the synthetic merge commit `GITHUB_SHA` names),
so links in the report point at lines the author wrote. The base is the merge base of
the head and the base branch's tip: what the PR changed, not what landed on the base
branch since it was opened. A shallow checkout is deepened once to find it.
"""

from __future__ import annotations

from pathlib import Path

from .. import gitio, indexbranch
from ..errors import UsageError


def commit_of(repo: Path, rev: str) -> str:
    sha = gitio.git_text(["rev-parse", "--verify", "-q", f"{rev}^{{commit}}"], repo,
                         check=False)
    if not sha:
        raise UsageError(f"not a commit in this repository: {rev}")
    return sha


def ensure_commit(repo: Path, sha: str, remote: str = "origin") -> None:
    if indexbranch.has_commit(repo, sha):
        return
    has_remote = gitio.run(["remote", "get-url", remote], repo).returncode == 0
    if not has_remote or not indexbranch.fetch_commit(repo, remote, sha):
        raise UsageError(f"commit {sha[:12]} is not in this clone and could not be fetched "
                         f"from {remote!r}")


def merge_base(repo: Path, a: str, b: str, remote: str = "origin") -> str:
    for attempt in (1, 2):
        proc = gitio.run(["merge-base", a, b], repo)
        if proc.returncode == 0:
            return proc.stdout.decode().strip()
        shallow = gitio.git_text(["rev-parse", "--is-shallow-repository"], repo) == "true"
        if attempt == 1 and shallow:
            gitio.git(["fetch", "--quiet", "--no-tags", "--unshallow", remote], repo,
                      check=False)
            continue
        break
    raise UsageError(f"no merge base of {a[:12]} and {b[:12]}; check out with "
                     "`fetch-depth: 0` so the history is there")


def pr_range(repo: Path, base_tip: str, head: str, remote: str = "origin") -> tuple[str, str]:
    """(merge base, head) as full commit ids."""
    ensure_commit(repo, head, remote)
    ensure_commit(repo, base_tip, remote)
    return merge_base(repo, base_tip, head, remote), head
