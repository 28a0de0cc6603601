"""Where the index comes from: `--index DIR`, `.kbase/` in the work tree, the local index
branch, a remote-tracking copy of it, FETCH_HEAD when it holds an index (`git fetch
origin kbase-index` in a single-branch clone fills only that), the index branch fetched
from a remote that has it (bounded by a timeout; never with `--offline` or
`KBASE_OFFLINE=1`, and a remote without one is asked again only after an hour: the
`remote_miss` memo of the state store, kbase_ci.state.memos), or (none of these) a build
in a temp folder.

A branch is read with one `git cat-file --batch` and materialised once into
`<git dir>/kbase/index/<tree id>/`: content-addressed, so a second query reuses it and
numpy can memory-map the files. The folder is written beside its final name and renamed
into place, so a killed query never leaves a half-written index that looks complete.
It is verified against its manifest and its tables validated before the rename
(`materialise`); a branch whose blobs differ from their manifest is refused, and a tree
refused once is refused again unread (`integrity.remember_refusal`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.errors import GitError, IndexFormatError
from kbase_ci.git.indexbranch import (
    BRANCH,
    fetch_head,
    fetch_index,
    index_commits,
    index_ref_tips,
)
from kbase_ci.git.repo import git_dir, has_commit, is_ancestor, remotes
from kbase_ci.index.manifest import manifest_at
from kbase_ci.index.reader import IndexReader, open_index
from kbase_ci.query.freshness import Member
from kbase_ci.state.folders import Scratch
from kbase_ci.state.hubcache import offline
from kbase_ci.vault.notefiles import Vault

if TYPE_CHECKING:
    from kbase_ci.state.memos import StateStore
from kbase_ci.git.listing import ls_tree
from kbase_ci.git.objects import blob_sizes, write_blobs
from kbase_ci.git.repo import tree_of
from kbase_ci.index.integrity import check_sizes, refused_before, remember_refusal
from kbase_ci.state.files import replace
from kbase_ci.state.folders import fresh_dir
from kbase_ci.vault.safefs import unsafe_part


@dataclass
class IndexSource:
    """An open index and where it came from (state: keeps a temp build alive)."""

    reader: IndexReader
    origin: str
    """`dir`, `worktree`, `branch`, `remote-branch`, `fetch-head` or `memory`."""
    location: str
    """The folder, or the branch name, or "" for an in-memory build."""
    notice: str | None = None
    """A one-line message for stderr (why the committed index was not used)."""
    _keep: Any = field(default=None, repr=False)
    scope: dict[str, Any] | None = None
    """A scoped index (`--scope`): {name, stale, reason}, carried in every answer."""
    member: Member | None = None
    """A scoped index: which work-tree notes the freshness overlay may show."""


def open_source(vault: Vault, index_dir: Path | None = None) -> IndexSource:
    """The index to answer from; an explicit `--index` that fails to open is an error,
    every other failure falls back to the next place and finally to a build. (A scoped
    index: `kbase_ci.scope.source.open_scope_source`.)"""
    if index_dir is not None:
        return IndexSource(open_index(index_dir, git_dir=vault.git_dir), "dir",
                           str(index_dir))
    problems: list[str] = []
    for found in committed(vault, problems):
        if problems and found.notice is None:  # a refused index must not pass unmentioned
            found.notice = (f"kbase: {'; '.join(problems)}: refused; answering from "
                            f"{found.location}")
        return found
    return _build(vault, problems)


def committed(vault: Vault, problems: list[str]) -> Iterator[IndexSource]:
    """The committed indexes, in the order a query tries them: `.kbase/`, the index
    branches (local, remote-tracking), FETCH_HEAD, and -- only when none of those was
    found -- the branch fetched from a remote. Lazy: a consumer that takes the first
    (`open_source`) never fetches; one that looks further (a scope missing from the
    first) reads the next. Each failure is appended to `problems` and skipped; a commit
    several of those name (a branch and FETCH_HEAD, a fetched branch) is tried once."""
    local = vault.root / ".kbase"
    found = False
    if local.is_symlink():  # committed `.kbase -> elsewhere`: may lead out of the repository
        problems.append(f"{local} is a symbolic link; kbase does not read an index "
                        "through one")
    elif (local / "manifest.json").is_file():
        try:
            source = IndexSource(open_index(local, git_dir=vault.git_dir), "worktree",
                                 str(local))
        except IndexFormatError as exc:
            problems.append(str(exc))
        else:
            found = True
            yield source
    repo = vault.repo_root
    if repo is None:
        return
    tried: set[str] = set()
    for source in chain(_from_refs(repo, problems, tried),
                        _from_fetch_head(repo, problems, tried)):  # lazily: the first may do
        found = True
        yield source
    if not found:
        yield from _fetched(repo, problems, tried)


def _from_refs(repo: Path, problems: list[str], tried: set[str],
               refs: list[tuple[str, str, str]] | None = None) -> Iterator[IndexSource]:
    """The index branches that validate (`refs`, else all of them), each replaced by
    FETCH_HEAD's index when that is newer than the branch; a commit in `tried` is not
    tried again (its verdict is said already)."""
    for ref, tree, commit in index_ref_tips(repo) if refs is None else refs:
        if commit in tried:
            continue
        tried.add(commit)
        try:
            folder = materialise(repo, ref, tree)
            # verified and validated when materialised (under the git dir)
            reader = open_index(folder, verify=False, validated=True)
        except IndexFormatError as exc:
            problems.append(str(exc))
            continue
        short = ref.removeprefix("refs/heads/").removeprefix("refs/remotes/")
        kind = "branch" if ref.startswith("refs/heads/") else "remote-branch"
        newer = _newer_fetch_head(repo, commit, reader.manifest.source.commit, problems,
                                  tried)
        if newer is not None:
            reader.close()
            yield newer
        else:
            yield IndexSource(reader, kind, short)


def _newer_fetch_head(repo: Path, tip: str, source_commit: str | None,
                      problems: list[str], tried: set[str]) -> IndexSource | None:
    """FETCH_HEAD's index when it is newer than the branch at `tip`: `git fetch origin
    kbase-index` refreshes only FETCH_HEAD, not origin/kbase-index. Newer: it descends
    from `tip`, or was built from a commit that descends from `tip`'s source commit."""
    fetched = [(c, what) for c, what in fetch_head(git_dir(repo)) if c not in tried]
    if not fetched:
        return None
    indexes = index_commits(repo, [c for c, _ in fetched])  # one git process
    for commit, what in fetched:
        if commit not in indexes:
            continue
        if not is_ancestor(repo, tip, commit):
            from kbase_ci.index.publish import source_of  # rare: only a rival index

            ours = source_of(repo, tip, source_commit)
            rival = manifest_at(repo, commit)
            theirs = source_of(repo, commit, rival.source_commit if rival else None)
            if ours is None or theirs is None or ours == theirs \
                    or not (has_commit(repo, ours) and has_commit(repo, theirs)) \
                    or not is_ancestor(repo, ours, theirs):
                continue
        found = _open_fetched(repo, commit, what, problems, tried)
        if found is not None:
            return found
    return None


def _from_fetch_head(repo: Path, problems: list[str], tried: set[str]
                     ) -> Iterator[IndexSource]:
    for commit, what in fetch_head(git_dir(repo)):
        if commit in tried or manifest_at(repo, commit) is None:
            continue  # tried already, or something else was fetched last
        found = _open_fetched(repo, commit, what, problems, tried)
        if found is not None:
            yield found


def _open_fetched(repo: Path, commit: str, what: str, problems: list[str],
                  tried: set[str]) -> IndexSource | None:
    tried.add(commit)
    try:
        reader = open_index(materialise(repo, commit), verify=False, validated=True)
    except IndexFormatError as exc:
        problems.append(str(exc))
        return None
    return IndexSource(reader, "fetch-head", f"FETCH_HEAD {commit[:12]} ({what})")


MISS_RETRY = 3600.0
"""Seconds before a remote without an index branch (or out of reach) is asked again."""


def _fetched(repo: Path, problems: list[str], tried: set[str]) -> Iterator[IndexSource]:
    """The index branch fetched from the first remote that has it (no local ref yet)."""
    if offline():
        return
    store = _memo(repo)
    misses = _misses(store)
    now = time.time()
    for remote in remotes(repo):
        if now - misses.get(remote, 0.0) < MISS_RETRY:
            continue
        try:
            commit = fetch_index(repo, remote)
        except GitError as exc:
            problems.append(str(exc))
            commit = None
        if commit is not None:
            print(f"kbase: fetched the index branch from {remote} "
                  f"(refs/remotes/{remote}/{BRANCH})", file=sys.stderr)
            yield from _from_refs(repo, problems, tried,
                                  [(f"refs/remotes/{remote}/{BRANCH}", "", commit)])
            return
        store.put("remote_miss", remote, repr(now))


def _retry_note(repo: Path) -> str:
    """When remotes were not asked because they had no index branch a while ago, when
    kbase asks again: a branch published since then is otherwise silently not looked for."""
    now = time.time()
    waiting = {r: t + MISS_RETRY for r, t in _misses(_memo(repo)).items()
               if t + MISS_RETRY > now}
    if not waiting:
        return ""
    remote, when = min(waiting.items(), key=lambda kv: kv[1])
    at = time.strftime("%H:%M UTC", time.gmtime(when))
    return (f" ({remote} had no {BRANCH} branch when last asked; kbase asks again after "
            f"{at}, or now with the fetch above)")


def _memo(repo: Path) -> StateStore:
    from kbase_ci.state.memos import state_store  # lazy: only a fetch asks (SQLite)

    return state_store(git_dir(repo) / "kbase")


def _misses(store: StateStore) -> dict[str, float]:
    """remote -> when it last had no index branch (the memo `_fetched` keeps); entries
    that are not a time are left out."""
    out: dict[str, float] = {}
    for remote, when in store.all("remote_miss").items():
        try:
            out[remote] = float(when)
        except ValueError:
            continue
    return out


FETCH_COMMAND = f"git fetch origin +{BRANCH}:refs/remotes/origin/{BRANCH}"
"""The command that gets a published index into any clone (a single-branch clone too)."""


def _build(vault: Vault, problems: list[str]) -> IndexSource:
    # Lazy: the build code (and what it imports) only when no committed index is found.
    from kbase_ci.index.indexbuild import build_index

    keep = Scratch()
    out = keep.path / "index"
    try:
        build_index(vault, out, use_cache=True)
    except BaseException:
        keep.cleanup()
        raise
    why = "; ".join(problems) + ": refused" if problems else "no committed index found"
    notice = (f"kbase: {why}; answering from an index built for this query in a temporary "
              f"folder. Get the published one with `{FETCH_COMMAND}`, or build one with "
              "`kbase index`."
              + (_retry_note(vault.repo_root) if vault.repo_root is not None else ""))
    return IndexSource(open_index(out, validated=True), "temporary", "", notice, keep)


def materialise(repo: Path, ref: str, tree: str = "") -> Path:
    """The index at `ref` (whose tree is `tree`, when known) as a verified folder under
    the git dir (created once)."""
    if not tree or tree.strip("0123456789abcdef"):  # not a commit, or not listed yet
        tree = tree_of(repo, ref)
    base = git_dir(repo) / "kbase" / "index"
    final = base / tree
    if (final / "manifest.json").is_file():
        return final
    why = refused_before(git_dir(repo), tree)  # the same bytes: the same verdict, unread
    if why is not None:
        raise IndexFormatError(f"{why} (refused before)")
    try:
        return _materialise(repo, ref, tree, base, final)
    except IndexFormatError as exc:
        remember_refusal(git_dir(repo), tree, str(exc))
        raise


def _materialise(repo: Path, ref: str, tree: str, base: Path, final: Path) -> Path:
    entries: list[tuple[str, str]] = []
    for e in ls_tree(repo, tree):
        rel, sha = e.path, e.sha
        if e.mode not in ("100644", "100755"):
            raise IndexFormatError(f"{ref}: {rel} is not a plain file: not a kbase index")
        if unsafe_part(rel) is not None:
            raise IndexFormatError(f"{ref}: unsafe path {rel}: not a kbase index")
        entries.append((rel, sha))
    # Sizes from object headers, before a byte is read: a forged 1.5 GB blob is refused,
    # and what is read is streamed to disk, never held in memory whole.
    sizes = blob_sizes(repo, [sha for _, sha in entries])
    check_sizes(f"index branch {ref}", {rel: sizes.get(sha, 0) for rel, sha in entries})
    base.mkdir(parents=True, exist_ok=True)
    import shutil

    # Lazy: the table checks run once per branch tree, when it is materialised here.
    from kbase_ci.index.validation import validate

    tmp = fresh_dir(base, f".{tree}.tmp-")
    try:
        for rel, _sha in entries:
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        write_blobs(repo, [(sha, tmp / rel) for rel, sha in entries])
        try:  # once: later queries skip the hashing and the validation
            reader = open_index(tmp, validated=True)
            reader.verify_all()
            validate(reader)
            reader.close()
        except IndexFormatError as exc:
            raise IndexFormatError(
                f"index branch {ref} is not a valid index: {_strip(str(exc), tmp)}") from None
        try:
            replace(tmp, final)
        except OSError:
            if not (final / "manifest.json").is_file():  # lost a race to nobody: a real error
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _strip(message: str, folder: Path) -> str:
    return message.replace(f"{folder}: ", "")
