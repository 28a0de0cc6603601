"""What an index was built from: the commit, its tree, and whether the work tree differed.

`built_at` is the commit's committer date, never the clock: two builds of one commit
must be byte-identical, and the commit date already says how fresh the index is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import gitio
from ..vault import Vault

NO_DATE = "1970-01-01T00:00:00+00:00"


@dataclass(frozen=True, slots=True)
class Source:
    commit: str | None
    tree: str | None
    dirty: bool
    dirty_paths: tuple[str, ...]
    """Vault-relative paths whose content differs from `commit` (notes and attachments)."""
    built_at: str
    path: str
    """The vault's folder inside the repository ("" at the root)."""

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "tree": self.tree, "dirty": self.dirty,
                "dirty_paths": list(self.dirty_paths), "path": self.path}


def source_of(vault: Vault) -> Source:
    if vault.repo_root is None:
        return Source(None, None, bool(vault.files), tuple(vault.files), NO_DATE, "")
    where = vault.prefix().rstrip("/")
    commit = gitio.head_commit(vault.root)
    if commit is None:  # no commit yet: everything is uncommitted
        return Source(None, None, bool(vault.files), tuple(vault.files), NO_DATE, where)
    tree = gitio.git_text(["rev-parse", f"{commit}^{{tree}}"], vault.root)
    date = gitio.git_text(["show", "-s", "--format=%cI", commit], vault.root)
    # `git diff HEAD` compares content (refreshing stale stat data in memory only), and
    # sees staged and unstaged changes, including files added to the index.
    out = gitio.git(["diff", "--no-ext-diff", "--no-renames", "--name-only", "-z",
                     "--relative", commit, "--", "."], vault.root)
    dirty = sorted({p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p})
    return Source(commit, tree, bool(dirty), tuple(dirty), date or NO_DATE, where)
