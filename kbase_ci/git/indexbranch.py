"""Git plumbing for the index branch: blobs, nested trees, deterministic commits, leased pushes.

Nothing here touches the work tree, the git index or HEAD: objects are written with
`hash-object -w` and `mktree`, the commit with `commit-tree`, and the branch moves with
`update-ref` against the value we read, so a concurrent writer makes us fail, not clobber.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kbase_ci.errors import GitError, UsageError
from kbase_ci.git.process import git, git_text, run
from kbase_ci.git.repo import git_dir, has_commit, rev_commit
from kbase_ci.typedjson import Record

# A fixed identity makes two publishers of the same tree on the same parent write the very
# same commit id, whoever runs them; GIT_AUTHOR_* / GIT_COMMITTER_* in the environment win.
BRANCH = "kbase-index"
"""The branch `kbase publish` commits the index to, and queries read it from."""
IDENTITY = ("kbase-ci", "kbase-ci@users.noreply.github.com")
_FILE_MODE, _TREE_MODE = "100644", "040000"


class PushOutcome(Record):  # not a dataclass: making one costs every query ~1 ms
    accepted: bool
    detail: str
    """git's own words for the ref (`[rejected] (stale info)`, ...), or its stderr."""


def read_file_at(repo: Path, commit: str, path: str) -> bytes | None:
    proc = run(["cat-file", "blob", f"{commit}:{path}"], repo)
    return proc.stdout if proc.returncode == 0 else None


def blob_size_at(repo: Path, commit: str, path: str) -> int | None:
    """The size of the blob at `path` in `commit`, from its object header (nothing of it
    is read); None when there is no blob there (nothing, a tree, a submodule)."""
    head = run(["cat-file", "--batch-check=%(objecttype) %(objectsize)"], repo,
               input=f"{commit}:{path}\n".encode("utf-8", "surrogateescape"))
    kind, _, size = head.stdout.decode(errors="replace").strip().partition(" ")
    return int(size) if head.returncode == 0 and kind == "blob" and size.isdigit() else None


def write_blobs(repo: Path, index_dir: Path, expected: Mapping[str, str]) -> None:
    """Write each file as a blob and check git stored the bytes whose id we predicted.

    `expected` maps relpath -> object id of the bytes that were verified; a file rewritten
    between verification and this call would get another id, and is refused.
    """
    paths = list(expected)
    if not paths:
        return
    stdin = "".join(f"{index_dir / p}\n" for p in paths).encode("utf-8", "surrogateescape")
    out = git(["hash-object", "-w", "--no-filters", "--stdin-paths"], repo, input=stdin)
    got = out.decode().split()
    for rel, sha in zip(paths, got, strict=True):
        if sha != expected[rel]:
            raise UsageError(f"{index_dir / rel}: changed while publishing; run again")


def write_tree(repo: Path, blobs: Mapping[str, str]) -> str:
    """A tree (with subtrees) holding `blobs` (relpath -> blob id); returns its id."""
    root: dict[str, Any] = {}
    for rel, sha in blobs.items():
        *dirs, name = rel.split("/")
        node = root
        for d in dirs:
            node = node.setdefault(d, {})
        node[name] = sha
    return _mktree(repo, root)


def _mktree(repo: Path, node: dict[str, Any]) -> str:
    lines = []
    for name, value in node.items():
        if isinstance(value, dict):
            lines.append(f"{_TREE_MODE} tree {_mktree(repo, value)}\t{name}\0")
        else:
            lines.append(f"{_FILE_MODE} blob {value}\t{name}\0")
    data = "".join(lines).encode("utf-8", "surrogateescape")
    return git(["mktree", "-z"], repo, input=data).decode().strip()


def git_date(built_at: str) -> str:
    """`built_at` (ISO 8601) in git's internal `@<seconds> <+hhmm>` form."""
    from datetime import UTC, datetime  # publishing only; every query imports this module

    try:
        when = datetime.fromisoformat(built_at)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"manifest built_at is not an ISO date: {built_at!r}") from exc
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    offset = when.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset else 0
    sign = "-" if minutes < 0 else "+"
    return f"@{int(when.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


def commit_tree(repo: Path, tree: str, parent: str | None, message: str, date: str) -> str:
    defaults = {}
    for role in ("AUTHOR", "COMMITTER"):
        defaults[f"GIT_{role}_NAME"] = IDENTITY[0]
        defaults[f"GIT_{role}_EMAIL"] = IDENTITY[1]
        defaults[f"GIT_{role}_DATE"] = date
    env = {k: v for k, v in defaults.items() if k not in os.environ}
    args = ["commit-tree", "--no-gpg-sign", tree]
    if parent:
        args += ["-p", parent]
    proc = run(args, repo, input=message.encode(), env=env)
    if proc.returncode != 0:
        raise GitError(f"git commit-tree failed: {proc.stderr.decode('utf-8', 'replace')}")
    return proc.stdout.decode().strip()


def update_ref(repo: Path, ref: str, new: str, old: str | None, fmt: str) -> None:
    """Move `ref` to `new` only if it still holds `old` (None: only if it does not exist)."""
    zero = "0" * (64 if fmt == "sha256" else 40)
    git(["update-ref", "-m", "kbase publish", ref, new, old or zero], repo)


def checked_out_branches(repo: Path) -> set[str]:
    out = git_text(["worktree", "list", "--porcelain"], repo)
    return {ln.split(" ", 1)[1] for ln in out.splitlines() if ln.startswith("branch ")}


def remote_tip(repo: Path, remote: str, branch: str) -> str | None:
    """Fetch `branch` from `remote` into refs/remotes/REMOTE/BRANCH; its tip, or None."""
    out = git_text(["ls-remote", "--heads", remote, f"refs/heads/{branch}"], repo)
    if not out:
        return None
    git(["fetch", "--quiet", "--no-tags", remote,
               f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}"], repo)
    return rev_commit(repo, f"refs/remotes/{remote}/{branch}")


def fetch_commit(repo: Path, remote: str, sha: str) -> bool:
    """Try to get commit `sha` from `remote` (its branches, then by id); True when present."""
    if has_commit(repo, sha):
        return True
    git(["fetch", "--quiet", "--no-tags", remote], repo, check=False)
    if not has_commit(repo, sha):
        git(["fetch", "--quiet", "--no-tags", remote, sha], repo, check=False)
    return has_commit(repo, sha)


def push_with_lease(repo: Path, remote: str, branch: str, commit: str,
                    seen: str | None) -> PushOutcome:
    """Push `commit` to BRANCH only if the remote still holds `seen` (None: is absent)."""
    ref = f"refs/heads/{branch}"
    args = ["push", "--porcelain", f"--force-with-lease={ref}:{seen or ''}", remote,
            f"{commit}:{ref}"]
    proc = run(args, repo)
    out = proc.stdout.decode("utf-8", "replace")
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[1].endswith(f":{ref}"):
            return PushOutcome(line[0] != "!", parts[2].strip())
    err = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode == 0:
        return PushOutcome(True, "")
    return PushOutcome(False, err or f"git push exited {proc.returncode}")


def index_refs(repo: Path) -> list[tuple[str, str]]:
    """(ref, its tree id or "") of each index branch, the local one first; the tree
    comes with the listing so that materialising needs no further git process."""
    return [(ref, tree) for ref, tree, _ in index_ref_tips(repo)]


def index_ref_tips(repo: Path) -> list[tuple[str, str, str]]:
    """(ref, tree id, commit id) of each index branch, in `index_refs` order."""
    out = git(["for-each-ref", "--format=%(refname)%00%(tree)%00%(objectname)",
                     f"refs/heads/{BRANCH}", "refs/remotes/"], repo, check=False)
    rows = [(parts[0], parts[1], parts[2]) for parts in
            (line.split("\0", 2) for line in
             out.decode("utf-8", "surrogateescape").splitlines()) if len(parts) == 3]
    local = [row for row in rows if row[0] == f"refs/heads/{BRANCH}"]
    remote = sorted(row for row in rows if row[0].startswith("refs/remotes/")
                    and row[0].endswith(f"/{BRANCH}"))
    # origin first: it is what a fresh clone has.
    remote.sort(key=lambda row: row[0] != f"refs/remotes/origin/{BRANCH}")
    return local + remote


def index_commits(repo: Path, commits: list[str]) -> list[str]:
    """Those of `commits` whose tree holds a manifest.json, in one git process (a cheap
    first sieve: FETCH_HEAD usually names a branch of notes, not an index)."""
    if not commits:
        return []
    out = git(["cat-file", "--batch-check=%(objecttype)", "--buffer"], repo,
              input="".join(f"{c}:manifest.json\n" for c in commits).encode(), check=False)
    kinds = out.decode("utf-8", "replace").splitlines()
    return [c for c, kind in zip(commits, kinds, strict=False) if kind == "blob"]


FETCH_TIMEOUT = 20.0
"""Seconds a query waits for a remote's index branch before answering without it
(`KBASE_FETCH_TIMEOUT` overrides)."""


def fetch_timeout() -> float:
    try:
        got = float(os.environ.get("KBASE_FETCH_TIMEOUT", "") or FETCH_TIMEOUT)
    except ValueError:
        return FETCH_TIMEOUT
    return got if got > 0 else FETCH_TIMEOUT


def fetch_index(repo: Path, remote: str, timeout: float | None = None) -> str | None:
    """`git fetch REMOTE kbase-index:refs/remotes/REMOTE/kbase-index` (no tags, killed
    after `timeout` seconds): the fetched commit, or None when the remote has no index
    branch. GitError when the remote cannot be reached or did not answer in time."""
    ref = f"refs/remotes/{remote}/{BRANCH}"
    proc = run(["fetch", "--quiet", "--no-tags", remote, f"+refs/heads/{BRANCH}:{ref}"],
               repo, timeout=timeout if timeout is not None else fetch_timeout())
    if proc.returncode == 0:
        return rev_commit(repo, ref)
    err = proc.stderr.decode("utf-8", "replace").strip()
    if "couldn't find remote ref" in err or "could not find remote ref" in err:
        return None
    raise GitError(f"git fetch {remote} {BRANCH} failed: {err.splitlines()[-1] if err else ''}")


def fetch_head(git_dir: Path) -> list[tuple[str, str]]:
    """(commit, what it is) per line of FETCH_HEAD (`git fetch origin kbase-index`
    fills only that in a single-branch clone); [] when there is none."""
    try:
        text = (git_dir / "FETCH_HEAD").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        sha, _, rest = line.partition("\t")
        if sha and not sha.strip("0123456789abcdef"):
            out.append((sha, rest.partition("\t")[2]))
    return out


def ref_stamp(repo: Path) -> str:
    """HEAD and every ref ending in /BRANCH with their commit ids: a long-lived reader
    compares two stamps to notice a moved or newly fetched index branch. FETCH_HEAD too:
    `git fetch origin kbase-index` may bring a newer index only there."""
    refs = git(["show-ref", "--head", BRANCH], repo, check=False).decode("utf-8", "replace")
    fetched = fetch_head(git_dir(repo))
    return refs + "".join(f"{sha} FETCH_HEAD\n" for sha, _ in fetched)


def trailer(repo: Path, commit: str, key: str) -> str | None:
    """The first value of trailer `key` in `commit`'s message, or None."""
    out = git_text(["show", "-s", f"--format=%(trailers:key={key},valueonly)", commit], repo)
    return out.splitlines()[0].strip() if out else None


def archive(repo: Path, commit: str) -> bytes:
    """`commit`'s tree as an uncompressed tar archive."""
    return git(["archive", "--format=tar", commit], repo)
