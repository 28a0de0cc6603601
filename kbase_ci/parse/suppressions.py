"""Inline suppressions: `<!-- kbase-ignore CODES -->`, `%% kbase-ignore CODES %%`, and
their `kbase-ignore-file` forms, found in a note's text.

A comment alone on its line silences the next non-blank line (like eslint's
`disable-next-line`); one that shares its line with text silences that line (like
ruff's `noqa`); the `-file` form silences the whole note. CODES are codes, code prefixes
or check names separated by spaces or commas, optionally followed by ` -- reason`; none
at all means every code. Comments inside code (fenced or indented blocks, code spans)
and inside the frontmatter are text, not suppressions, and so is comment syntax where
no comment starts: inside math, a wikilink, a link destination, an HTML tag, after a
backslash or inside another comment (`_Comments`). Which words are real codes is judged
by the checks (KB901), not here.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from kbase_ci.parse.textspans import blank, code_spans
from kbase_ci.parsed import Suppression

MARKER = "kbase-ignore"
_COMMENT = re.compile(r"<!--[ \t]*kbase-ignore(-file)?\b(.*?)-->|%%[ \t]*kbase-ignore(-file)?\b"
                      r"(.*?)%%")
_WORDS = re.compile(r"[\s,]+")
# What can hide a `<!--` from HTML: an escape, math, a wikilink, a link destination, a
# tag (its attribute values); and the comments themselves. Compiled on first use (re
# caches them): only a note with a `kbase-ignore` needs them.
_OPENER = r"\\.|\$\$|\$|\[\[|\]\(|<!--|%%|</?[A-Za-z]"
_TAG = (r"""</?[A-Za-z][A-Za-z0-9-]*(?:\s+[^\s"'=<>`/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|"""
        r"""[^\s"'=<>`]+))?)*\s*/?>""")
_CLOSERS = {"<!--": "-->", "%%": "%%", "$$": "$$", "[[": "]]"}


def find_suppressions(text: str, code_rows: Collection[int], first_line: int
                      ) -> tuple[Suppression, ...]:
    """The suppression comments of `text` (a note, `\\n` line ends), skipping the 1-based
    lines in `code_rows` and those before `first_line` (the frontmatter). Only a comment
    HTML or Obsidian would see counts: not one inside math, a wikilink, a link
    destination, an HTML attribute or another comment (issue 38: `[x](<!--
    kbase-ignore-file -->)` silenced a whole note)."""
    if MARKER not in text:
        return ()
    lines = text.split("\n")
    out: list[Suppression] = []
    scan = _Comments()
    opens = re.compile(_OPENS)
    for row, line in enumerate(lines, 1):
        if row < first_line or row in code_rows:
            continue
        if MARKER not in line and not scan.open and not opens.search(line):
            continue
        masked = blank(line, code_spans(line)) if "`" in line else line
        # Where the line's text starts and ends: whether a comment shares its line with
        # text is then two comparisons, not a copy of the line per comment.
        first, last = len(line) - len(line.lstrip()), len(line.rstrip())
        for at in scan.starts(masked):
            m = _COMMENT.match(line, at)
            if m is None:
                continue
            whole = m.group(1) or m.group(3)
            body = (m.group(2) if m.group(2) is not None else m.group(4)) or ""
            codes = tuple(w for w in _WORDS.split(body.split(" -- ", 1)[0]) if w)
            if whole:
                target = 0
            elif m.start() > first or m.end() < last:
                target = row
            else:
                target = _next_text_line(lines, row)
            out.append(Suppression(row, m.start() + 1, codes, target))
    return tuple(out)


_OPENS = r"\$\$|<!--|%%"
"""What opens a construct that may run on to the next lines."""


class _Comments:
    """Where comments start in a note's lines, read in order (state: a comment or `$$`
    math block still open from an earlier line). One pass per line: each construct is
    skipped to its closer, and a closer missing from the rest of the line is not looked
    for again on it, so a line of 100k unclosed `[[` stays linear."""

    def __init__(self) -> None:
        self.open = ""
        """The closer of what an earlier line left open (`-->`, `%%`, `$$`), or ""."""
        self._opener, self._tag = re.compile(_OPENER), re.compile(_TAG)

    def starts(self, line: str) -> list[int]:
        out: list[int] = []
        i = 0
        if self.open:
            j = line.find(self.open)
            if j < 0:
                return out
            i, self.open = j + len(self.open), ""
        missing: set[str] = set()
        while (m := self._opener.search(line, i)) is not None:
            tok, at, i = m.group(), m.start(), m.end()
            if tok[0] == "\\":
                continue
            if tok in ("<!--", "%%"):
                out.append(at)
            closer = _CLOSERS.get(tok) or (")" if tok == "](" else "")
            if tok == "](" and line.startswith("<", i):
                closer = ">"
            if tok == "$":  # inline math: `$x$`, no space inside either end
                closer = "$" if line[i:i + 1] not in ("", " ", "\t") else ""
            if closer:
                j = -1 if closer in missing else line.find(closer, i)
                if j < 0:
                    missing.add(closer)
                    if tok in ("<!--", "%%", "$$"):
                        self.open = closer  # runs on: the rest of the line is inside
                        break
                    continue
                if tok == "$" and line[j - 1] in " \t":
                    continue
                i = j + len(closer)
            elif tok[0] == "<":
                tag = self._tag.match(line, at)
                if tag is not None:
                    i = tag.end()
        return out


def _next_text_line(lines: list[str], row: int) -> int:
    for k in range(row, len(lines)):  # `lines[k]` is line k + 1
        if lines[k].strip():
            return k + 1
    return row + 1
