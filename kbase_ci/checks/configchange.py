"""A commit that changes `.kbase.yml`: which notes the new settings can judge differently.

The staged file is validated when the vault is opened (a bad key is a located KB900,
exit 2), so `vault.folderz` cannot land. What the new settings mean for notes nobody
touched is found by checking the notes each changed section can affect, and the
new-only rule (`newonly`, against HEAD and HEAD's config) then blocks only the findings
the change introduced: a new `tags.allowed` re-checks the notes with tags; a change to
which files are notes, how links resolve, or which checks run re-checks every note.
"""

from __future__ import annotations

from collections.abc import Sequence

from kbase_ci.errors import KbaseError
from kbase_ci.git.diff import FileChange
from kbase_ci.parsed import Finding, Severity
from kbase_ci.vault.config import CONFIG_NAME, Config
from kbase_ci.vault.configsource import config_at
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.notestore import NoteStore
from kbase_ci.vault.yamlconfig import section_keys

_NO_NOTES = frozenset({"index", "embeddings", "scopes", "handover"})
"""Sections no check reads (`handover.threshold` is `kbase handover check`'s)."""


def config_changed(changes: Sequence[FileChange]) -> bool:
    """Whether this change set adds, edits, moves or deletes the vault's `.kbase.yml`."""
    return any(CONFIG_NAME in (c.path, c.old_path) for c in changes)


def judging_changes(before: Config | None, after: Config) -> list[str]:
    """The `.kbase.yml` sections that judge notes and differ between `before` (None:
    unknown, so all) and `after`, in the file's order."""
    return [name for name in section_keys(Config) if name not in _NO_NOTES and (
        before is None or getattr(before, name) != getattr(after, name))]


def policy_key(f: Finding) -> tuple[str, int, int, str, Severity]:
    """What tells a finding under one policy from one under another: where, which code,
    how much it weighs (a check turned from error to warning counts as changed)."""
    return (f.path, f.line, f.col, f.code, f.severity)


def head_config(vault: Vault) -> Config | None:
    """HEAD's settings, or None (no HEAD, or its `.kbase.yml` was broken)."""
    try:
        return config_at(vault.root, "HEAD")
    except KbaseError:
        return None


def affected_notes(vault: Vault, store: NoteStore) -> list[str]:
    """The notes whose findings the staged `.kbase.yml` may change from HEAD's."""
    before = head_config(vault)  # None: anything may differ
    after = vault.config
    changed = set(judging_changes(before, after))
    if not changed:
        return []
    if changed == {"tags"} and before is not None and \
            before.tags.required == after.tags.required:
        return [p for p in store.paths if store.summary(p).tags]
    return list(store.paths)
