"""`read --expand-links` within a budget: the linked notes' sections that say most about
the link that brought them (kbase_ci.query.sectionrank: a section linking back, the
note's opening), packed into what the answer's budget leaves, instead of whole notes
that the budget would cut to their first 200 characters."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from kbase_ci.query import sectionrank as rank
from kbase_ci.query.budget import Piece, pack
from kbase_ci.query.pieces import JOIN_TOKENS, NoteSections, cut, load_sections
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
        texts: list[str] = []
        ranges: list[list[int]] = []
        omitted: list[str] = []
        for i, (heading, start, end, text) in enumerate(n.pieces):
            if i not in picks:
                omitted.append(heading.rsplit(" > ", 1)[-1] if heading
                               else "(before the first heading)")
                continue
            if partial is not None and partial[:2] == (at, i):
                end, text = partial[2], partial[3]
            if ranges and i - 1 in picks:
                ranges[-1][1] = end
            else:
                ranges.append([start, end])
            texts.append(text)
        whole = not omitted and (partial is None or partial[0] != at)
        omitted = _most(omitted, [prio[at][i] for i in range(len(n.pieces)) if i not in picks])
        out.append(Packed(n.reached.path, "\n\n".join(texts),
                          None if whole else ", ".join(f"{a}-{b}" for a, b in ranges),
                          omitted))
    return out


OMITTED_MAX = 6
"""Headings of left-out sections a note names (as `kbase context`'s)."""


def _most(headings: list[str], prio: list[float]) -> list[str]:
    """The most relevant `OMITTED_MAX` headings, then how many more."""
    order = sorted(range(len(headings)), key=lambda i: (-prio[i], i))
    out = [headings[i] for i in order[:OMITTED_MAX]]
    if len(headings) > OMITTED_MAX:
        out.append(f"(+{len(headings) - OMITTED_MAX} more)")
    return out
