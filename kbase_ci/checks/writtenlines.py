"""The lines of a note a commit wrote: a line diff of the note against its HEAD blob.

A link that finds another note after a rename is the author's choice when the commit
wrote that very line (`NoteChanges.written_lines`); the hook's new-only rule reads the
same lines.
"""

from __future__ import annotations

from kbase_ci.git.objects import read_blobs
from kbase_ci.parse.outline import note_text, split_lines
from kbase_ci.vault.notefiles import Vault


def changed_lines(vault: Vault | None, path: str, old_sha: str | None, *,
                  new: bool) -> frozenset[int] | None:
    """New-side line numbers of note `path` that differ from HEAD blob `old_sha`; None
    when the note is new (`new`: the commit added it)."""
    nf = vault.note(path) if vault is not None else None
    if vault is None or old_sha is None or nf is None:
        return None if new else frozenset()
    if nf.sha == old_sha:
        return frozenset()
    import difflib  # rarely needed: only for a moved-or-deleted target's links

    old = _text_lines(read_blobs(vault.root, [old_sha])[old_sha])
    new_lines = _text_lines(vault.read([nf])[path])
    fresh: set[int] = set()
    matcher = difflib.SequenceMatcher(None, old, new_lines, autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            fresh.update(range(j1 + 1, j2 + 1))
    return frozenset(fresh)


def _text_lines(data: bytes) -> list[str]:
    return split_lines(note_text(data))
