"""The repository around a folder: its roots, HEAD, commits and remotes."""

from __future__ import annotations

import os
from pathlib import Path

from kbase_ci.errors import GitError
from kbase_ci.git.process import git, git_text, run

# Positive answers only, per process: a command asks for the same folder several times
# (its root, its vault, its index source) and each asks cost a git process (~3 ms). A
# folder that is not in a repository now may become one (`git init`), so misses are
# asked again.
_DIRS: dict[str, tuple[Path, Path]] = {}
REPO_DIRS = ("rev-parse", "--show-toplevel", "--absolute-git-dir")


def repo_dirs(path: Path) -> tuple[Path, Path] | None:
    """(work tree root, absolute git dir) around `path` in one git process, or None
    outside a git work tree (a hook pays ~3 ms per git process)."""
    key = os.path.abspath(path)
    hit = _DIRS.get(key)
    if hit is not None:
        return hit
    try:
        out = git(REPO_DIRS, path, check=True)
    except GitError:
        return None
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 2 or not lines[0] or not lines[1]:
        return None
    found = Path(lines[0]), Path(lines[1])
    _DIRS[key] = found
    return found


def toplevel(path: Path) -> Path | None:
    """The work tree root containing `path`, or None outside a git work tree."""
    dirs = repo_dirs(path)
    return dirs[0] if dirs is not None else None


def find_root(start: Path | None = None) -> Path:
    """The vault root for a command: the git work tree around `start`, else `start`."""
    here = (start or Path.cwd()).resolve()
    return toplevel(here) or here


def git_dir(path: Path) -> Path:
    dirs = repo_dirs(path)
    if dirs is not None:
        return dirs[1]
    return Path(git_text(["rev-parse", "--absolute-git-dir"], path))  # a bare repository


def head_commit(path: Path) -> str | None:
    out = git(["rev-parse", "--verify", "-q", "HEAD"], path, check=False)
    return out.decode().strip() or None


def rev_commit(repo: Path, rev: str) -> str | None:
    """The commit id `rev` names (a branch, tag, sha, `HEAD~2`), or None if it names none."""
    out = git(["rev-parse", "--verify", "-q", f"{rev}^{{commit}}"], repo, check=False)
    return out.decode().strip() or None


def tree_of(repo: Path, rev: str) -> str:
    """The tree id of commit `rev` (GitError when there is none)."""
    return git_text(["rev-parse", f"{rev}^{{tree}}"], repo)


def commit_date(repo: Path, commit: str) -> str:
    """The committer date of `commit`, strict ISO 8601."""
    return git_text(["show", "-s", "--format=%cI", commit], repo)


def has_commit(repo: Path, sha: str) -> bool:
    out = git(["cat-file", "-t", sha], repo, check=False)
    return out.decode().strip() == "commit"


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    """True when `older` is `newer` or one of its ancestors (both must be present)."""
    proc = run(["merge-base", "--is-ancestor", older, newer], repo)
    if proc.returncode > 1:
        raise GitError(f"git merge-base failed: {proc.stderr.decode('utf-8', 'replace')}")
    return proc.returncode == 0


def merge_base(repo: Path, a: str, b: str) -> str | None:
    """The best common ancestor of two commits, or None when history lacks one."""
    proc = run(["merge-base", a, b], repo)
    if proc.returncode != 0:
        return None
    return proc.stdout.decode().strip() or None


def is_shallow(repo: Path) -> bool:
    return git_text(["rev-parse", "--is-shallow-repository"], repo) == "true"


def unshallow(repo: Path, remote: str) -> None:
    """Fetch the rest of a shallow clone's history (failure is left to the caller's next
    question, which then says what is missing)."""
    git(["fetch", "--quiet", "--no-tags", "--unshallow", remote], repo, check=False)


def remotes(repo: Path) -> list[str]:
    """The repository's remotes, `origin` first."""
    names = git_text(["remote"], repo, check=False).split()
    return sorted(names, key=lambda n: (n != "origin", n))


def has_remote(repo: Path, remote: str) -> bool:
    return run(["remote", "get-url", remote], repo).returncode == 0


def valid_branch_name(repo: Path, branch: str) -> bool:
    return run(["check-ref-format", "--branch", branch], repo).returncode == 0


def object_format(repo: Path) -> str:
    """The repository's object hash: `sha1` or `sha256`."""
    out = git(["rev-parse", "--show-object-format"], repo, check=False)
    return out.decode().strip() or "sha1"
