"""`read --expand-links` within a budget: the linked notes' sections that say most about
the link that brought them (kbase_ci.query.sectionrank: a section linking back, the
note's opening), packed into what the answer's budget leaves, instead of whole notes
that the budget would cut to their first 200 characters."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from kbase_ci.query import sectionrank as rank
from kbase_ci.query.budget import Piece, pack
from kbase_ci.query.pieces import (
    JOIN_TOKENS,
    NoteSections,
    chosen_text,
    cut,
    load_sections,
    most_relevant,
    section_title,
)
from kbase_ci.query.traverse import Reached
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record

ROUNDS = 6
"""Measure-and-shrink rounds: the JSON around the text costs what it costs."""


class Packed(Record):
    """One linked note's part: its text, the line ranges shown (None: all of it), and the
    headings left out."""

    path: str
    text: str
    lines: str | None
    omitted: list[str]


def sections_of(view: QueryView, linked: Sequence[tuple[str, str, int]]) -> list[NoteSections]:
    """(path, via, depth) per linked note -> its sections."""
    return [load_sections(view, Reached(path, depth, 0.0, 0.0, 0, 0.0, ((via, "outlink"),)))
            for path, via, depth in linked]


def fill(view: QueryView, notes: list[NoteSections],
         measure: Callable[[list[Packed]], int], budget: int) -> list[Packed]:
    """The linked notes' parts whose answer costs at most `budget` (`measure`: what the
    answer costs with these parts), or as close as `ROUNDS` tries get."""

    if not notes:
        return []
    weights = [1 / math.sqrt(k) for k in range(1, len(notes) + 1)]
    prio = rank.priorities(weights, rank.link_relevance(view, notes))
    text_budget = budget - measure([])  # what the answer with no linked text leaves
    parts = _parts(notes, prio, text_budget)
    for _ in range(ROUNDS):
        over = measure(parts) - budget
        if over <= 0 or text_budget <= 0:
            break
        text_budget -= over + 8
        parts = _parts(notes, prio, text_budget)
    return parts


def _parts(notes: list[NoteSections], prio: list[list[float]], budget: int) -> list[Packed]:
    pieces = [[Piece(i, c, p[i]) for i, c in enumerate(n.costs)]
              for n, p in zip(notes, prio, strict=True)]
    heads = [JOIN_TOKENS] * len(notes)
    picked, used, skipped = pack(pieces, heads, max(0, budget))
    partial: tuple[int, int, int, str] | None = None
    for at, order in skipped[:4]:  # what is left: the best skipped section's start
        got = cut(notes[at].pieces[order], budget - used - (0 if picked[at] else JOIN_TOKENS))
        if got is not None:
            partial = (at, order, *got)
            picked[at] = sorted([*picked[at], order])
            break
    out = []
    for at, (n, picks) in enumerate(zip(notes, picked, strict=True)):
        if not picks:
            continue
        left = [i for i in range(len(n.pieces)) if i not in picks]
        mine = partial[1:] if partial is not None and partial[0] == at else None
        lines, text = chosen_text(n, picks, mine)
        omitted = most_relevant([section_title(n.pieces[i][0]) for i in left],
                                [prio[at][i] for i in left])
        out.append(Packed(n.reached.path, text, None if not left and mine is None else lines,
                          omitted))
    return out
