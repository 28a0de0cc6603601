"""What an index was built from: the commit, its tree, and whether the work tree differed.

`built_at` is the commit's committer date, never the clock: two builds of one commit
must be byte-identical, and the commit date already says how fresh the index is.
"""

from __future__ import annotations

from dataclasses import dataclass

from kbase_ci.git.listing import changed_since
from kbase_ci.git.repo import commit_date, head_commit, tree_of
from kbase_ci.index.blocks import Source
from kbase_ci.vault.notefiles import Vault

NO_DATE = "1970-01-01T00:00:00+00:00"


@dataclass(frozen=True, slots=True)
class Provenance:
    source: Source
    """The manifest's `source` block."""
    built_at: str
    """The commit's committer date (`NO_DATE` without one)."""


def source_of(vault: Vault) -> Provenance:
    if vault.repo_root is None:
        return Provenance(Source(None, None, bool(vault.files), tuple(vault.files), ""),
                          NO_DATE)
    where = vault.prefix().rstrip("/")
    commit = head_commit(vault.root)
    if commit is None:  # no commit yet: everything is uncommitted
        return Provenance(Source(None, None, bool(vault.files), tuple(vault.files), where),
                          NO_DATE)
    tree = tree_of(vault.root, commit)
    date = commit_date(vault.root, commit)
    dirty = changed_since(vault.root, commit)
    return Provenance(Source(commit, tree, bool(dirty), tuple(dirty), where), date or NO_DATE)
