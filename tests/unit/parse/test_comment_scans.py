"""Issue 38, item 9: only a real comment is a suppression, so the suppression scan now
skips math, wikilinks, link destinations and HTML tags to find where comments start
(kbase_ci.parse.suppressions). That scan is linear in a line of what it skips, closed or
never closed (a closer missing from the rest of a line is not looked for again):
twice the line costs at most 2.5x the CPU (tests/complexity.assert_linear)."""

from __future__ import annotations

import pytest

from kbase_ci.parse.suppressions import find_suppressions
from tests.complexity import assert_linear

KB = 1_000


@pytest.mark.parametrize("piece", ["[[", "](", "](<", "<a b=\"", "<a b='", "<a ", "$a",
                                   "$$", "<!--", "%%", "\\", "<!-- kbase-ignore -->",
                                   "[[a]]", "[a](b)", '<a b="c">', "$a$ "])
def test_finding_comments_is_linear(piece: str) -> None:
    def line(size: int) -> str:
        return "# A\n\n" + piece * (size // len(piece)) + " <!-- kbase-ignore KB101 -->\n"

    assert_linear(line, lambda text: len(find_suppressions(text, (), 1)), 256 * KB)


def test_a_comment_after_what_it_skips_is_found() -> None:
    text = ('# A\n\n[[B|x]] [y](<z>) <i title="<!-- no -->">$a$</i> $$m$$ '
            "<!-- kbase-ignore KB101 -->\n")
    assert [(s.line, s.codes) for s in find_suppressions(text, (), 1)] == [(3, ("KB101",))]
