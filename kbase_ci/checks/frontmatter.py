"""Frontmatter that is not valid YAML or not a mapping (parser diagnostics KB30x)."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Finding
from .context import CheckContext

CODES = {
    "KB301": "frontmatter is not valid YAML",
    "KB302": "frontmatter repeats a key",
    "KB303": "frontmatter is not terminated by a `---` line",
    "KB304": "frontmatter is too large or expands too far (YAML alias bomb)",
    "KB305": "frontmatter is not a mapping of properties",
}


def check(ctx: CheckContext) -> Iterator[Finding]:
    for note in ctx.focus_notes:
        for d in note.diagnostics:
            if d.code in CODES:
                yield Finding(note.path, d.line, d.col, d.code, d.message, severity=d.severity)
