"""A note's sections: the text between headings, with line ranges.

The parser keeps positions, not text; consumers that need words (handover checks,
index chunks, `kbase read NOTE#heading`) cut the note's text along the heading
lines the parser found, so everyone agrees on where a section starts and ends.
Lines split where the parser's lines split ("\\r\\n", "\\r" or "\\n"; not form feeds or
U+2028, which `str.splitlines` also breaks on), so line numbers agree everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kbase_ci.parsed import Heading, ParsedNote


@dataclass(frozen=True, slots=True)
class Section:
    """A note's text from one heading to the next heading of the same or a higher level."""

    heading: Heading | None
    """None for the text before the first heading (after any frontmatter)."""
    path: tuple[str, ...]
    """Heading texts from the outermost to this one; () for the preamble."""
    start_line: int
    """Line of the heading (or of the first body line for the preamble)."""
    end_line: int
    """Last line that belongs to the section (inclusive)."""
    body: str
    """The text under the heading, without the heading line itself."""

    @property
    def title(self) -> str:
        return self.heading.text if self.heading else ""


def note_title(path: str) -> str:
    """A note's name as Obsidian shows it: the file name without `.md`. (Here, not with
    the parsed records: the index reader derives every row's title with it, and a query
    should not pay for those records' dataclasses to do so.)"""
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def note_text(data: bytes) -> str:
    """Decode note bytes the way the parser does (invalid bytes replaced, BOM dropped)."""
    text = data.decode("utf-8", "replace")
    return text[1:] if text.startswith("\ufeff") else text


def split_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def sections(note: ParsedNote, text: str, *, nested: bool = False) -> list[Section]:
    """Sections in document order.

    Flat (default): each heading runs to the next heading of any level (index chunks).
    nested=True: each heading runs to the next heading of the same or a higher level,
    so `## Changes` includes its `###` subsections (what a reader means by a section).
    """
    lines = split_lines(text)
    last = len(lines)
    while last > 0 and not lines[last - 1].strip():
        last -= 1
    heads = sorted(note.headings, key=lambda h: h.line)
    first_body = note.frontmatter_end + 1
    out: list[Section] = []
    pre_end = (heads[0].line - 1) if heads else last
    if any(ln.strip() for ln in lines[first_body - 1:pre_end]):
        out.append(Section(None, (), first_body, pre_end,
                           "\n".join(lines[first_body - 1:pre_end]).strip("\n")))
    ends = _ends(heads, last, nested)
    for h, end in zip(heads, ends, strict=True):
        # Setext headings span two lines; their underline is not body text.
        body_from = h.line + 1
        atx = lines[h.line - 1].lstrip(" >").startswith("#") if h.line <= len(lines) else True
        if not atx and body_from <= len(lines) and _is_setext_underline(lines[body_from - 1]):
            body_from += 1
        body = "\n".join(lines[body_from - 1:max(end, body_from - 1)]).strip("\n")
        out.append(Section(h, (*h.parents, h.text), h.line, max(end, h.line), body))
    return out


def _ends(heads: list[Heading], last: int, nested: bool) -> list[int]:
    """The last line of each heading's section, in one pass (issue 28: a scan to the next
    heading per heading made a 2 MB note of headings quadratic): flat, the line before the
    next heading; nested, before the next heading of the same or a higher level, found by
    closing the open headings a new one outranks (a stack, each heading pushed once)."""
    ends = [last] * len(heads)
    open_: list[int] = []
    for j, nxt in enumerate(heads):
        if not nested:
            if j:
                ends[j - 1] = nxt.line - 1
            continue
        while open_ and heads[open_[-1]].level >= nxt.level:
            ends[open_.pop()] = nxt.line - 1
        open_.append(j)
    return ends


def _is_setext_underline(line: str) -> bool:
    s = line.strip()
    return len(s) >= 1 and (set(s) == {"="} or set(s) == {"-"})
