"""Issue 22, hangs: the concept-mention scans of parse/mentions (kbase gaps, ci, index)
are linear. Each case is a line of what made a scan quadratic (`[[`, `<`: 106 s for 50k
before), timed at 256 KB and at 512 KB: twice the line must cost at most 2.5x the CPU
(tests/complexity.assert_linear; a quadratic scan costs 4x)."""

from __future__ import annotations

import pytest

from kbase_ci.parse.conceptmentions import extract, heading_keys, name_keys
from tests.complexity import assert_linear

KB = 1_000


def line_of(piece: str, size: int) -> str:
    return piece * (size // len(piece))


@pytest.mark.parametrize("piece", ["[[", "<", "[a](", "][", "[", "Aa-", "Aa'", "1aB",
                                   "The Aa Bb. ", "Using Aa Bb\n", "[[a]] ", "http://",
                                   # issue 31's noise scans: math, drawings, tables
                                   "$a", "$$a ", "$a`", "## Drawing\n# x\n",
                                   "# Drawing\n## Drawing\n", "| a |\n| --- |\n",
                                   "| EAX | r1 |\n"])
def test_concept_mentions_are_linear(piece: str) -> None:
    assert_linear(lambda size: line_of(piece, size), lambda text: len(extract(text)),
                  256 * KB)


def test_fenced_notes_and_long_headings_are_linear() -> None:
    assert_linear(lambda size: line_of("```\nx\n```\n", size),
                  lambda text: len(extract(text)), 256 * KB)
    # One regex pass over the heading: a few ms a MB, so 8 MB to time it at all.
    assert_linear(lambda size: "# a" + " " * size + "b\n",
                  lambda text: len(heading_keys(text)), 8_000 * KB)


def test_a_table_delimiter_row_with_a_long_blank_tail_is_linear() -> None:
    """Two `[ \\t]*` side by side at the row's end backtracked (`|---`, 40k spaces: 12 s)."""
    assert_linear(lambda size: "| a | b |\n|---" + " " * size + "x\n",
                  lambda text: len(extract(text)), 256 * KB)


def test_a_title_with_a_long_run_of_blanks_is_linear() -> None:
    """`name_keys` on a PR's alias: a lazy group before `\\s*` backtracked (19 s at 40k)."""
    assert_linear(lambda size: "a" + " " * size + "b (c)",
                  lambda name: len(name_keys(name)), 256 * KB)
