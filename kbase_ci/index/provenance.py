"""What an index was built from: the commit, its tree, and whether the work tree differed.

`built_at` is the commit's committer date, never the clock: two builds of one commit
must be byte-identical, and the commit date already says how fresh the index is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kbase_ci.git.listing import changed_since
from kbase_ci.git.repo import commit_date, head_commit, tree_of
from kbase_ci.vault.files import Vault

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
    commit = head_commit(vault.root)
    if commit is None:  # no commit yet: everything is uncommitted
        return Source(None, None, bool(vault.files), tuple(vault.files), NO_DATE, where)
    tree = tree_of(vault.root, commit)
    date = commit_date(vault.root, commit)
    dirty = changed_since(vault.root, commit)
    return Source(commit, tree, bool(dirty), tuple(dirty), date or NO_DATE, where)
