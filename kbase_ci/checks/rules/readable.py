"""Notes that cannot be read as text or are too large to parse (parser diagnostics KB0xx),
and tracked notes the work tree holds as something no one can read as a file (KB004)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from kbase_ci.checks.checkcontext import CheckContext
from kbase_ci.parsed import Finding

CODES = {
    "KB001": "note is not valid UTF-8 (decoded with replacement characters)",
    "KB002": "file named .md is binary",
    "KB003": "note is larger than vault.max_note_bytes and was not parsed",
    "KB004": "tracked note is a FIFO, socket or device in the work tree; not read",
}
WARNINGS = frozenset({"KB003", "KB004"})
"""Codes reported as warnings by default (the registry's severity). KB001 is an error:
a note that is not UTF-8 reads with replacement characters in Obsidian and every
Markdown tool, its links and text mangled; the `kbase-input` hook rejects it (issue 39;
`checks.severity: {KB001: warning}` lets such notes in)."""


def check(ctx: CheckContext) -> Iterator[Finding]:
    for note in ctx.focus_notes:
        for d in note.diagnostics:
            if d.code in CODES:
                yield Finding(note.path, d.line, d.col, d.code, d.message,
                              severity="warning" if d.code in WARNINGS else "error")
    yield from _not_files(ctx)


def _not_files(ctx: CheckContext) -> Iterator[Finding]:
    """Tracked notes the work tree replaced by a FIFO, socket or device. The vault skips
    them unread (opening a FIFO waits for a writer for ever), so a whole-vault check says
    why the note is missing. git lists no untracked FIFO, so only tracked paths can be."""
    vault = ctx.vault
    if vault is None or not ctx.whole or ctx.change is not None or \
            vault.mode != "git-worktree":
        return
    for rel in sorted(vault.worktree_moves()[1]):
        if not vault.is_note_path(rel):
            continue
        try:
            mode = os.lstat(vault.root / rel).st_mode
        except OSError:  # deleted: the links check reports what points at it
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode) or stat.S_ISDIR(mode)):
            yield Finding(rel, 1, 1, "KB004", CODES["KB004"], severity="warning")
