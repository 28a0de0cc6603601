"""Issue 28: `kbase index` was quadratic in the headings of one note: each heading's
section end was found by scanning (and copying) the headings after it. Sections and
index chunks are now one pass over the headings, flat and nested alike."""

from __future__ import annotations

from kbase_ci.index.chunks import chunk_note
from kbase_ci.parse.outline import note_text, sections
from kbase_ci.parse.parser import parse_note
from kbase_ci.parsed import ParsedNote
from tests.complexity import assert_linear


def _headings(n: int) -> tuple[ParsedNote, bytes]:
    data = "\n".join(f"{'#' * (1 + i % 6)} Heading {i}\nbody {i}" for i in range(n)).encode()
    return parse_note("Big.md", data), data


def test_sections_and_chunks_are_linear_in_the_headings() -> None:
    def run(made: tuple[ParsedNote, bytes]) -> list[int]:
        note, data = made
        text = note_text(data)
        return [len(sections(note, text)), len(sections(note, text, nested=True)),
                len(chunk_note(note, data))]

    assert assert_linear(_headings, run, 20000, budget=120) == [40000, 40000, 80000]


def test_nested_sections_end_at_the_next_heading_of_a_level_as_high() -> None:
    note, data = _headings(8)  # levels 1 2 3 4 5 6 1 2
    nested = sections(note, note_text(data), nested=True)
    assert [(s.start_line, s.end_line) for s in nested] == [
        (1, 12), (3, 12), (5, 12), (7, 12), (9, 12), (11, 12), (13, 16), (15, 16)]
    flat = sections(note, note_text(data))
    assert [(s.start_line, s.end_line) for s in flat] == [
        (i, i + 1) for i in range(1, 17, 2)]
