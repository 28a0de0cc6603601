"""Where the index comes from: `--index DIR`, `.kbase/` in the work tree, the local index
branch, a remote-tracking copy of it, or (none of these) a build in a temp folder.

A branch is read with one `git cat-file --batch` and materialised once into
`<git dir>/kbase/index/<tree id>/`: content-addressed, so a second query reuses it and
numpy can memory-map the files. The folder is written beside its final name and renamed
into place, so a killed query never leaves a half-written index that looks complete.
It is verified against its manifest before the rename; a branch whose blobs differ from
their manifest is refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import gitio
from ..errors import IndexFormatError
from ..index.reader import IndexReader, open_index
from ..vault import Vault
from .freshness import Member

BRANCH = "kbase-index"


@dataclass
class IndexSource:
    """An open index and where it came from (state: keeps a temp build alive)."""

    reader: IndexReader
    origin: str
    """`dir`, `worktree`, `branch`, `remote-branch` or `memory`."""
    location: str
    """The folder, or the branch name, or "" for an in-memory build."""
    notice: str | None = None
    """A one-line message for stderr (why the committed index was not used)."""
    _keep: Any = field(default=None, repr=False)
    scope: dict[str, Any] | None = None
    """A scoped index (`--scope`): {name, stale, reason}, carried in every answer."""
    member: Member | None = None
    """A scoped index: which work-tree notes the freshness overlay may show."""


def _ref_trees(repo: Path) -> list[tuple[str, str]]:
    """(ref, its tree id or "") of each index branch, the local one first; the tree
    comes with the listing so that materialising needs no further git process."""
    out = gitio.git(["for-each-ref", "--format=%(refname)%00%(tree)",
                     f"refs/heads/{BRANCH}", "refs/remotes/"], repo, check=False)
    rows = [tuple(line.split("\0", 1)) for line in
            out.decode("utf-8", "surrogateescape").splitlines() if "\0" in line]
    local = [(r, t) for r, t in rows if r == f"refs/heads/{BRANCH}"]
    remote = sorted((r, t) for r, t in rows if r.startswith("refs/remotes/")
                    and r.endswith(f"/{BRANCH}"))
    # origin first: it is what a fresh clone has.
    remote.sort(key=lambda rt: rt[0] != f"refs/remotes/origin/{BRANCH}")
    return local + remote


def _ref_candidates(repo: Path) -> list[str]:
    return [ref for ref, _tree in _ref_trees(repo)]


def materialise(repo: Path, ref: str, tree: str = "") -> Path:
    """The index at `ref` (whose tree is `tree`, when known) as a verified folder under
    the git dir (created once)."""
    if not tree or tree.strip("0123456789abcdef"):  # not a commit, or not listed yet
        tree = gitio.git_text(["rev-parse", f"{ref}^{{tree}}"], repo)
    base = gitio.git_dir(repo) / "kbase" / "index"
    final = base / tree
    if (final / "manifest.json").is_file():
        return final
    listing = gitio.git(["ls-tree", "-r", "-z", tree], repo)
    entries: list[tuple[str, str]] = []
    for item in listing.split(b"\0"):
        if not item:
            continue
        meta, _, name = item.partition(b"\t")
        mode, kind, sha = meta.decode().split(" ")
        rel = name.decode("utf-8", "surrogateescape")
        if kind != "blob" or mode not in ("100644", "100755"):
            raise IndexFormatError(f"{ref}: {rel} is not a plain file: not a kbase index")
        if rel.startswith("/") or ".." in rel.split("/"):
            raise IndexFormatError(f"{ref}: unsafe path {rel}: not a kbase index")
        entries.append((rel, sha))
    blobs = gitio.read_blobs(repo, [sha for _, sha in entries])
    base.mkdir(parents=True, exist_ok=True)
    import shutil
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix=f".{tree}.tmp-", dir=base))
    try:
        for rel, sha in entries:
            dest = tmp / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(blobs[sha])
        try:
            open_index(tmp).verify_all()  # once: later queries skip the hashing
        except IndexFormatError as exc:
            raise IndexFormatError(
                f"index branch {ref} is not a valid index: {_strip(str(exc), tmp)}") from None
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / "manifest.json").is_file():  # lost a race to nobody: a real error
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _strip(message: str, folder: Path) -> str:
    return message.replace(f"{folder}: ", "")


def open_source(vault: Vault, index_dir: Path | None = None, scope: str | None = None, *,
                stale_ok: bool = False) -> IndexSource:
    """The index to answer from; an explicit `--index` that fails to open is an error,
    every other failure falls back to the next place and finally to a build. `scope`:
    that scoped index of the same index (kbase_ci/scope/store.py), never a fallback."""
    if scope is not None:
        from ..scope.store import open_scope_source

        return open_scope_source(vault, index_dir, scope, stale_ok=stale_ok)
    if index_dir is not None:
        return IndexSource(open_index(index_dir), "dir", str(index_dir))
    problems: list[str] = []
    local = vault.root / ".kbase"
    if (local / "manifest.json").is_file():
        try:
            return IndexSource(open_index(local), "worktree", str(local))
        except IndexFormatError as exc:
            problems.append(str(exc))
    repo = vault.repo_root
    if repo is not None:
        for ref, tree in _ref_trees(repo):
            try:
                folder = materialise(repo, ref, tree)
                reader = open_index(folder, verify=False)  # verified when materialised
            except IndexFormatError as exc:
                problems.append(str(exc))
                continue
            short = ref.removeprefix("refs/heads/").removeprefix("refs/remotes/")
            kind = "branch" if ref.startswith("refs/heads/") else "remote-branch"
            return IndexSource(reader, kind, short)
    return _build(vault, problems)


def _build(vault: Vault, problems: list[str]) -> IndexSource:
    import tempfile

    from ..index.build import build_index

    keep = tempfile.TemporaryDirectory(prefix="kbase-query-")
    out = Path(keep.name) / "index"
    build_index(vault, out, use_cache=True)
    why = "; ".join(problems) + ": refused" if problems else "no committed index found"
    notice = (f"kbase: {why}; answering from an index built in memory. Get the committed "
              f"one with `git fetch origin {BRANCH}`, or build it with `kbase index`.")
    return IndexSource(open_index(out), "memory", "", notice, keep)
