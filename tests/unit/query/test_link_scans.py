"""Issue 22, hangs: the sentence of each link (query/links: `kbase links`, `backlinks`,
`explore`) is found in linear time. The line was cut again for each of its links (33 s to
> 120 s for a line of 20k links); twice the line must now cost at most 2.5x the CPU
(tests/complexity.assert_linear)."""

from __future__ import annotations

from kbase_ci.query.links import Sentences
from tests.complexity import assert_linear

PIECE = "see [[A]]. "


def line_of(size: int) -> str:
    return PIECE * (size // len(PIECE))


def test_sentences_of_a_line_with_many_links_are_linear() -> None:
    def every_link(line: str) -> int:
        cut = Sentences(line)
        return sum(len(cut.at(col)) for col in range(5, len(line), len(PIECE)))

    assert every_link(line_of(22)) == 2 * len("see [[A]].")
    assert_linear(line_of, every_link, 256_000)
