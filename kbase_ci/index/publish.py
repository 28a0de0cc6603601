"""`kbase publish`: commit a built index directory to the index branch, and push it safely.

The branch is generated data, so a race is settled by *regenerating*, never by merging:
push with a lease on the tip we saw; when the lease breaks, fetch, and either stop (the
branch already holds an index of a newer source commit) or rebuild and retry, bounded.
A publisher reports success only when the remote holds its commit, an identical one, or a
newer source's index; every other ending is `gave-up` or an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kbase_ci.errors import GitError, IndexFormatError, UsageError
from kbase_ci.git import indexbranch
from kbase_ci.git import repo as git_repo
from kbase_ci.index.localindex import TRAILER, LocalIndex, load_index
from kbase_ci.index.manifest import MANIFEST_NAME, BranchIndex, manifest_at
from kbase_ci.typedjson import Record

_OBJECT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
PublishStatus = Literal["created", "committed", "unchanged", "superseded", "gave-up"]


class PublishResult(Record, json=(
        "status", "ok", "branch", "commit", "previous", "tree", "source_commit", "pushed",
        "remote", "attempts", "rejections", "detail", "newer_source", "ignored")):
    status: PublishStatus
    branch: str
    commit: str | None
    """The tip this publish leaves on the branch (the remote's when pushing; after gave-up,
    the remote tip that beat us)."""
    previous: str | None
    """The tip the last attempt saw before writing (the remote's when pushing)."""
    tree: str
    source_commit: str | None
    pushed: bool
    """True only when our own push moved the remote branch to `commit`."""
    remote: str | None
    rejections: tuple[str, ...] = ()
    """git's words for each of our pushes that lost a race, in order."""
    detail: str = ""
    newer_source: str | None = None
    """For `superseded`: the source commit of the index the branch holds."""
    ignored: tuple[str, ...] = ()
    """Files in the index directory that the manifest does not list: not published."""

    @property
    def ok(self) -> bool:
        return self.status != "gave-up"

    @property
    def attempts(self) -> int:
        """Pushes made: the lost ones, plus the one that landed."""
        return len(self.rejections) + int(self.pushed)


@dataclass(frozen=True, slots=True)
class _Target:
    """Where a publish writes, and what it is allowed to replace."""

    repo: Path
    ref: str
    branch: str
    remote: str | None
    """None: local publish, nothing fetched or pushed."""
    fmt: str
    force: bool


@dataclass(frozen=True, slots=True)
class _Lost:
    """Our push lost: the remote tip that beat it, and git's words."""

    tip: str | None
    detail: str


def publish(repo: Path, index_dir: Path, *, branch: str = indexbranch.BRANCH,
            remote: str = "origin", push: bool = False, squash: bool = False,
            force: bool = False, allow_dirty: bool = False, max_retries: int = 3,
            rebuild: Callable[[], None] | None = None) -> PublishResult:
    """Commit `index_dir` to `branch` (and push it to `remote` when `push`).

    `rebuild` regenerates `index_dir` from the current source after a lost push race;
    without it the same directory is re-verified and retried. Refusals raise UsageError
    (or IndexFormatError); a race lost `max_retries + 1` times returns `gave-up`.
    """
    top = git_repo.toplevel(repo)
    if top is None:
        raise UsageError(f"not a git repository: {repo}")
    if not git_repo.valid_branch_name(top, branch):
        raise UsageError(f"not a valid branch name: {branch!r}")
    if max_retries < 0:
        raise UsageError("--max-retries must be 0 or more")
    ref = f"refs/heads/{branch}"
    if ref in indexbranch.checked_out_branches(top):
        raise UsageError(f"branch {branch} is checked out in a work tree; publish writes the "
                         "index branch without a checkout, so use a branch nobody has out")
    if push and not git_repo.has_remote(top, remote):
        raise UsageError(f"no git remote named {remote!r}")
    t = _Target(top, ref, branch, remote if push else None, git_repo.object_format(top),
                force)
    lost: list[str] = []
    while True:
        index = load_index(index_dir, t.fmt, allow_dirty=allow_dirty)
        indexbranch.write_blobs(top, index_dir, index.blobs)
        tree = indexbranch.write_tree(top, index.blobs)
        res = _attempt(t, index, tree, squash, tuple(lost))
        if isinstance(res, PublishResult):
            return res
        lost.append(res.detail)
        if len(lost) > max_retries:
            return PublishResult(
                "gave-up", branch, res.tip, None, tree, index.source_commit, False, remote,
                tuple(lost), ignored=index.ignored,
                detail=f"{remote}/{branch} moved under each of our {len(lost)} pushes; "
                       "nothing of ours was published")
        if rebuild is not None:
            rebuild()


def _attempt(t: _Target, index: LocalIndex, tree: str, squash: bool,
             lost: tuple[str, ...]) -> PublishResult | _Lost:
    local_tip = git_repo.rev_commit(t.repo, t.ref)
    seen = indexbranch.remote_tip(t.repo, t.remote, t.branch) if t.remote else None
    manifests: dict[str, BranchIndex | None] = {}
    for tip, where in ((local_tip, f"branch {t.branch}"), (seen, f"{t.remote}/{t.branch}")):
        if tip is not None and tip not in manifests:
            manifests[tip] = _check_replaceable(t, tip, where, index)
    # Build on the local branch unless the remote has moved past it: the remote is the truth.
    base = local_tip
    if seen is not None and (local_tip is None
                             or not git_repo.is_ancestor(t.repo, seen, local_tip)):
        base = seen

    def result(status: PublishStatus, commit: str, pushed: bool = False, detail: str = "",
               newer: str | None = None, rejected: tuple[str, ...] = ()) -> PublishResult:
        if commit != local_tip:  # the local branch mirrors what the publish leaves
            indexbranch.update_ref(t.repo, t.ref, commit, local_tip, t.fmt)
        return PublishResult(status, t.branch, commit, seen if t.remote else local_tip, tree,
                             index.source_commit, pushed, t.remote, lost + rejected, detail,
                             newer, index.ignored)

    ours = str(index.source_commit)[:12]
    if base is not None:
        newer = _newer_source(t, base, manifests[base], index.source_commit)
        if newer is not None:
            return result("superseded", base, newer=newer,
                          detail=f"it holds an index of {newer[:12]}, newer than {ours}")
    status: PublishStatus
    if base is not None and git_repo.tree_of(t.repo, base) == tree:
        commit, status = base, "unchanged"
    else:
        # A replaced foreign branch starts over: its history is not an index's history.
        orphan = squash or base is None or manifests.get(base) is None
        commit = indexbranch.commit_tree(t.repo, tree, None if orphan else base,
                                         index.commit_message(),
                                         indexbranch.git_date(index.built_at))
        status = "created" if base is None else "committed"
    if t.remote is None or commit == seen:
        return result(status, commit)
    outcome = indexbranch.push_with_lease(t.repo, t.remote, t.branch, commit, seen)
    if outcome.accepted:
        return result(status, commit, pushed=True)
    now = indexbranch.remote_tip(t.repo, t.remote, t.branch)
    if now == seen:  # the lease held, so this was no race: a hook, permissions, the network
        raise GitError(f"git push to {t.remote} was refused: {outcome.detail}")
    rejected = (outcome.detail,)
    if now == commit:  # another publisher pushed the very same deterministic commit
        return result(status, now, detail="another publisher pushed this same commit",
                      rejected=rejected)
    theirs = manifest_at(t.repo, now) if now else None
    if now is not None and theirs is not None:
        newer = _newer_source(t, now, theirs, index.source_commit)
        if newer is not None:
            return result("superseded", now, newer=newer, rejected=rejected,
                          detail=f"lost the push race to an index of {newer[:12]}, newer "
                                 f"than {ours}")
        if git_repo.tree_of(t.repo, now) == tree:
            return result("unchanged", now, detail="another publisher pushed this same index",
                          rejected=rejected)
    return _Lost(now, outcome.detail)


def _check_replaceable(t: _Target, tip: str, where: str, index: LocalIndex
                       ) -> BranchIndex | None:
    manifest = manifest_at(t.repo, tip)
    if t.force:
        return manifest
    if manifest is None and \
            indexbranch.blob_size_at(t.repo, tip, MANIFEST_NAME) is not None:
        # A manifest.json that is not a kbase manifest (bad types, forged): a broken
        # index, replaced by this one, not a branch refused forever (issue 28).
        return None
    if manifest is None:
        raise UsageError(f"{where} ({tip[:12]}) does not hold a kbase index (no manifest.json "
                         "with format kbase-index); refusing to overwrite it. Pick another "
                         "--branch, or pass --force to replace it")
    if manifest.format_version > index.format_version:
        raise IndexFormatError(f"{where} holds index format {manifest.format_version}, "
                               f"newer than this build's {index.format_version}; upgrade "
                               "kbase-ci, or pass --force to replace it")
    return manifest


def _newer_source(t: _Target, tip: str, manifest: BranchIndex | None,
                  ours: str | None) -> str | None:
    """The source commit behind `tip` when it strictly descends from ours, else None."""
    if t.force or manifest is None or ours is None:
        return None
    theirs = source_of(t.repo, tip, manifest.source_commit)
    if theirs is None or theirs == ours:
        return None
    present = (indexbranch.fetch_commit(t.repo, t.remote, theirs) if t.remote
               else git_repo.has_commit(t.repo, theirs))
    if not present:
        # Not knowing the order, overwriting could replace a newer index with an older one.
        raise UsageError(f"{t.branch} ({tip[:12]}) was built from commit {theirs[:12]}, which "
                         "is not in this clone, so kbase cannot tell whether it is newer than "
                         f"{ours[:12]}; fetch it (or deepen a shallow clone), or pass --force")
    if not git_repo.has_commit(t.repo, ours):
        return None
    return theirs if git_repo.is_ancestor(t.repo, ours, theirs) else None


def source_of(repo: Path, commit: str, recorded: str | None) -> str | None:
    """The source commit an index-branch commit was built from: what its manifest
    records (`recorded`), else its trailer.

    Only a full hex object id counts: the value comes from a branch anyone with push access
    wrote, and is passed to `git fetch` and `git merge-base` (no `--upload-pack=...`).
    """
    value = recorded
    if value is None:
        value = indexbranch.trailer(repo, commit, TRAILER)
    return value if value is not None and _OBJECT_ID.fullmatch(value) else None


def describe(r: PublishResult) -> str:
    """One line for people: what publishing did, and where."""
    short = (r.commit or "")[:12]
    where = f"{r.remote}/{r.branch}" if r.remote else r.branch
    src = (r.source_commit or "unknown")[:12]
    if r.status == "gave-up":
        return f"kbase publish: gave up: {r.detail}"
    if r.status == "superseded":
        return f"kbase publish: {where} is newer, nothing published: {r.detail}"
    if r.status == "unchanged":
        tail = f"; pushed {short}" if r.pushed else ""
        extra = f" ({r.detail})" if r.detail else ""
        return f"kbase publish: {where} already holds this index at {short}{extra}{tail}"
    verb = "created" if r.status == "created" else "committed"
    pushed = f", pushed to {r.remote}" if r.pushed else ""
    extra = f" ({r.detail})" if r.detail else ""
    if r.rejections:
        extra += f" after {len(r.rejections)} lost push race(s)"
    return f"kbase publish: {verb} {r.branch} {short} from source {src}{pushed}{extra}"
