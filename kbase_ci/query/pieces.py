"""A note cut into the sections the budget takes or leaves, each with its token cost."""

from __future__ import annotations

from dataclasses import dataclass

from kbase_ci.parse.frontmatter import split as split_frontmatter
from kbase_ci.parse.outline import sections, split_lines
from kbase_ci.parsed import Heading, ParsedNote
from kbase_ci.query.budget import estimate_tokens
from kbase_ci.query.traverse import Reached
from kbase_ci.query.view import QueryView

JOIN_TOKENS = 2
"""Charged per section and per note header: the newlines that join them in the output."""


@dataclass
class NoteSections:
    reached: Reached
    pieces: list[tuple[str | None, int, int, str]]
    """(heading path, start line, end line, text) per section, document order."""
    costs: list[int]


def outline_note(view: QueryView, path: str, text: str) -> ParsedNote:
    """What `outline.sections` needs (headings with parents, where the frontmatter ends),
    from the index's heading table instead of a full parse: an unchanged note's headings
    are the index's. Notes changed since the index were parsed by the overlay."""
    parsed = view.fresh.parsed.get(path)
    if parsed is not None:
        return parsed
    info = view.notes[path]
    _, fm_end, _, _ = split_frontmatter(text.replace("\r\n", "\n").replace("\r", "\n"))
    heads: list[Heading] = []
    stack: list[tuple[int, str]] = []
    for level, title, line in info.headings:
        while stack and stack[-1][0] >= level:
            stack.pop()
        heads.append(Heading(level, title, line, tuple(t for _, t in stack)))
        stack.append((level, title))
    return ParsedNote(path, info.title, headings=tuple(heads), frontmatter_end=fm_end)


def load_sections(view: QueryView, r: Reached) -> NoteSections:
    text = view.text(r.path)
    parsed = outline_note(view, r.path, text)
    lines = split_lines(text)
    pieces: list[tuple[str | None, int, int, str]] = []
    for sec in sections(parsed, text):
        body = "\n".join(lines[sec.start_line - 1:sec.end_line]).strip("\n")
        if body.strip():
            pieces.append((" > ".join(sec.path) or None, sec.start_line, sec.end_line, body))
    return NoteSections(r, pieces, [estimate_tokens(p[3]) + JOIN_TOKENS for p in pieces])
