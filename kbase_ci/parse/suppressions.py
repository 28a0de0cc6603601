"""Inline suppressions: `<!-- kbase-ignore CODES -->`, `%% kbase-ignore CODES %%`, and
their `kbase-ignore-file` forms, found in a note's text.

A comment alone on its line silences the next non-blank line (like eslint's
`disable-next-line`); one that shares its line with text silences that line (like
ruff's `noqa`); the `-file` form silences the whole note. CODES are codes, code prefixes
or check names separated by spaces or commas, optionally followed by ` -- reason`; none
at all means every code. Comments inside code (fenced or indented blocks, code spans)
and inside the frontmatter are text, not suppressions. Which words are real codes is
judged by the checks (KB901), not here.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from kbase_ci.parse.textspans import code_spans
from kbase_ci.parsed import Suppression

MARKER = "kbase-ignore"
_COMMENT = re.compile(r"<!--[ \t]*kbase-ignore(-file)?\b(.*?)-->|%%[ \t]*kbase-ignore(-file)?\b"
                      r"(.*?)%%")
_WORDS = re.compile(r"[\s,]+")


def find_suppressions(text: str, code_rows: Collection[int], first_line: int
                      ) -> tuple[Suppression, ...]:
    """The suppression comments of `text` (a note, `\\n` line ends), skipping the 1-based
    lines in `code_rows` and those before `first_line` (the frontmatter)."""
    lines = text.split("\n")
    out: list[Suppression] = []
    for row, line in enumerate(lines, 1):
        if row < first_line or row in code_rows or MARKER not in line:
            continue
        spans = code_spans(line) if "`" in line else []
        for m in _COMMENT.finditer(line):
            if any(a <= m.start() < b for a, b in spans):
                continue
            whole = m.group(1) or m.group(3)
            body = (m.group(2) if m.group(2) is not None else m.group(4)) or ""
            codes = tuple(w for w in _WORDS.split(body.split(" -- ", 1)[0]) if w)
            if whole:
                target = 0
            elif (line[:m.start()] + line[m.end():]).strip():
                target = row
            else:
                target = _next_text_line(lines, row)
            out.append(Suppression(row, m.start() + 1, codes, target))
    return tuple(out)


def _next_text_line(lines: list[str], row: int) -> int:
    for k in range(row, len(lines)):  # `lines[k]` is line k + 1
        if lines[k].strip():
            return k + 1
    return row + 1
