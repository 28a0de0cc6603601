"""Notes that cannot be read as text or are too large to parse (parser diagnostics KB0xx)."""

from __future__ import annotations

from collections.abc import Iterator

from kbase_ci.checks.checkcontext import CheckContext
from kbase_ci.parsed import Finding

CODES = {
    "KB001": "note is not valid UTF-8 (decoded with replacement characters)",
    "KB002": "file named .md is binary",
    "KB003": "note is larger than vault.max_note_bytes and was not parsed",
}
WARNINGS = frozenset({"KB001", "KB003"})
"""Codes reported as warnings by default (the registry's severity)."""


def check(ctx: CheckContext) -> Iterator[Finding]:
    for note in ctx.focus_notes:
        for d in note.diagnostics:
            if d.code in CODES:
                yield Finding(note.path, d.line, d.col, d.code, d.message, severity=d.severity)
