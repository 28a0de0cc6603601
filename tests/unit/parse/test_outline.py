from __future__ import annotations

from kbase_ci.parse.outline import Section, note_text, sections
from kbase_ci.parse.parser import parse_note
from kbase_ci.parsed import ParsedNote

DOC = """---
title: x
---
Intro line.

# Top
top body
## Changes Made
- a.py
### Detail
detail body
## Next Steps
Setext
------
under setext
"""


def _note() -> tuple[object, str]:
    return parse_note("n.md", DOC.encode()), DOC


def test_flat_sections_run_to_the_next_heading() -> None:
    note = parse_note("n.md", DOC.encode())
    got = [(s.path, s.start_line, s.end_line, s.body) for s in sections(note, DOC)]
    assert got == [
        ((), 4, 5, "Intro line."),
        (("Top",), 6, 7, "top body"),
        (("Top", "Changes Made"), 8, 9, "- a.py"),
        (("Top", "Changes Made", "Detail"), 10, 11, "detail body"),
        (("Top", "Next Steps"), 12, 12, ""),
        (("Top", "Setext"), 13, 15, "under setext"),
    ]


def _section(note: ParsedNote, name: str) -> Section | None:
    return next((s for s in sections(note, DOC, nested=True)
                 if s.heading is not None and s.heading.text.lower() == name), None)


def test_nested_sections_include_subsections() -> None:
    note = parse_note("n.md", DOC.encode())
    s = _section(note, "changes made")
    assert s is not None
    assert (s.start_line, s.end_line) == (8, 11)
    assert s.body == "- a.py\n### Detail\ndetail body"
    assert _section(note, "Blockers") is None and _section(note, "Impediments") is None


def test_note_text_drops_bom_and_replaces_bad_bytes() -> None:
    assert note_text(b"\xef\xbb\xbfhi\xff") == "hi\ufffd"


def test_lines_split_where_the_parser_splits_them() -> None:
    # A lone CR ends a line for the parser; a form feed or U+2028 does not.
    text = "# A\ronly\x0cone\u2028line\r\n# B\nbody\n"
    note = parse_note("n.md", text.encode())
    assert [(h.text, h.line) for h in note.headings] == [("A", 1), ("B", 3)]
    got = [(s.title, s.start_line, s.end_line, s.body) for s in sections(note, text)]
    assert got == [("A", 1, 2, "only\x0cone\u2028line"), ("B", 3, 4, "body")]
