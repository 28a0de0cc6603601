"""One budget pass of `context`'s bundle: the sections chosen per note (ranked by
query/sectionrank.py, packed by query/budget.py, the last one cut at a paragraph), the
notes that survive it, why each is there, and the answer record made from it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from kbase_ci.query import sectionrank as rank
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.budget import Piece, estimate_tokens, pack
from kbase_ci.query.bundle import BundledNote, ContextAnswer, separator
from kbase_ci.query.pieces import (
    JOIN_TOKENS,
    NoteSections,
    chosen_text,
    cut,
    most_relevant,
    section_title,
)
from kbase_ci.query.traversalinfo import LinkTraversal, Metadata
from kbase_ci.query.traverse import Reached
from kbase_ci.query.view import QueryView


def _why(r: Reached, seeds: dict[str, str], parents: list[tuple[str, str]]) -> str:
    if r.path in seeds:
        return seeds[r.path]
    words = {"outlink": "linked from", "backlink": "links to", "mutual": "linked with"}
    parent, relation = parents[0]
    if relation.startswith("tag:"):
        text = f"shares #{relation[4:]} with {parent}"
    else:
        text = f"{words[relation]} {parent}"
    return text + (f" (+{len(parents) - 1} more)" if len(parents) > 1 else "")



NEIGHBOUR = 0.5
"""A linked note's weight beside a seed's (1, or a search hit's 1/sqrt(rank)), falling as
1/sqrt of its place among the linked notes: its sections come after a seed's relevant
ones, before a seed's unrelated ones when they match the query."""


def priorities(view: QueryView, loaded: list[NoteSections], seeds: dict[str, float],
                query: str | None) -> dict[str, list[float]]:
    """Each note's section priorities (kbase_ci.query.sectionrank)."""

    weights, place = [], 0
    for n in loaded:
        if n.reached.path in seeds:
            weights.append(seeds[n.reached.path])
        else:
            place += 1
            weights.append(NEIGHBOUR / math.sqrt(place))
    by_links = rank.link_relevance(view, loaded)
    rel = by_links if query is None else rank.blend(
        rank.query_relevance(view, query, loaded), by_links)
    return {n.reached.path: p
            for n, p in zip(loaded, rank.priorities(weights, rel), strict=True)}


@dataclass
class Fit:
    notes: list[NoteSections]
    """The notes that survive this pass, in bundle order."""
    chosen: dict[str, list[int]]
    """Section numbers chosen per surviving note."""
    used: int
    orphaned: set[str]
    why: dict[str, str]
    header: dict[str, int]
    partial: dict[str, tuple[int, int, str]]
    """Note -> (section number, its last line kept, its text kept) for the one section
    cut at a paragraph to fill the budget."""
    prio: dict[str, list[float]]


def fit_sections(loaded: list[NoteSections], seed_why: dict[str, str], budget: int,
                 prio: dict[str, list[float]]) -> Fit:
    """One budget pass: sections chosen per note, and which notes survive it."""
    why: dict[str, str] = {}
    kept_paths: set[str] = set()
    headers: list[int] = []
    for n in loaded:
        r = n.reached
        parents = [(p, rel) for p, rel in r.parents if p in kept_paths]
        why[r.path] = _why(r, seed_why, parents) if (parents or r.path in seed_why) else ""
        kept_paths.add(r.path)
        headers.append(estimate_tokens(separator(r.path, r.depth, why[r.path])) + JOIN_TOKENS)
    pieces = [[Piece(i, c, prio[n.reached.path][i]) for i, c in enumerate(n.costs)]
              for n in loaded]
    # The seeds' header lines are kept back first: a seed none of whose sections fits
    # still shows its header, which the neighbours' sections must not have used up (the
    # bundle then lost the seed and, with it, every note reached from it).
    seeds_head = sum(h for n, h in zip(loaded, headers, strict=True)
                     if n.reached.path in seed_why)
    kept_back = seeds_head if seeds_head < budget else 0
    picked, used, skipped = pack(pieces, headers, budget - kept_back)
    costs = [{i: n.costs[i] for i in picks} for n, picks in zip(loaded, picked, strict=True)]
    partial: dict[str, tuple[int, int, str]] = {}
    left = budget - kept_back - used
    for at, order in skipped[:_CUT_TRIES]:  # fill what is left with the best section's start
        head = 0 if picked[at] else headers[at]
        got = cut(loaded[at].pieces[order], left - head)
        if got is not None:
            spent = estimate_tokens(got[1]) + JOIN_TOKENS
            partial[loaded[at].reached.path] = (order, *got)
            picked[at] = sorted([*picked[at], order])
            costs[at][order] = spent
            used += head + spent
            break
    fit = Fit([], {}, used, set(), why,
               {n.reached.path: h for n, h in zip(loaded, headers, strict=True)}, partial,
               prio)
    for n, picks, head, cost_of in zip(loaded, picked, headers, costs, strict=True):
        path = n.reached.path
        is_seed = path in seed_why
        if not is_seed and not any(p in fit.chosen for p, _ in n.reached.parents):
            fit.orphaned.add(path)
            if picks:
                fit.used -= head + sum(cost_of.values())
            continue
        if not picks:
            if not is_seed or head > budget - fit.used:
                continue
            fit.used += head  # a seed whose sections are all too big still shows its header
        fit.chosen[path] = picks
        fit.notes.append(n)
    return fit


_CUT_TRIES = 4
"""Skipped sections, best first, tried for a cut that fills the budget's rest."""


def _omitted(n: NoteSections, picks: list[int], prio: list[float]) -> list[str]:
    """The sections left out, most relevant first, by their own heading; a section whose
    parent section is left out too goes without saying (`read NOTE#parent` reads it
    with its parent)."""
    named: list[int] = []
    gone: set[str] = set()
    for i, piece in enumerate(n.pieces):
        heading = piece[0]
        if i in picks:
            continue
        if heading is not None:
            gone.add(heading)
            if heading.rpartition(" > ")[0] in gone:
                continue
        named.append(i)
    return most_relevant([section_title(n.pieces[i][0]) for i in named],
                         [prio[i] for i in named])


def bundle_answer(note: str | None, query: str | None, max_tokens: int,
                  follow: list[str], fit: Fit, used: int, left_out: list[str],
                  walk: Walk, index: IndexInfo) -> ContextAnswer:
    notes: list[BundledNote] = []
    cut_sections = 0
    for n in fit.notes:
        r = n.reached
        picks = fit.chosen[r.path]
        partial = fit.partial.get(r.path)
        omitted = _omitted(n, picks, fit.prio[r.path])
        cut_sections += len(n.pieces) - len(picks)
        if partial is not None and partial[1] < n.pieces[partial[0]][2]:
            omitted.append(f"{section_title(n.pieces[partial[0]][0])} "
                           f"(from line {partial[1] + 1})")
            cut_sections += 1
        lines, text = chosen_text(n, picks, partial)
        notes.append(BundledNote(r.path, r.depth, fit.why[r.path], lines, omitted, text))
    limits = [*walk.limits]
    if left_out:
        limits.append(f"{len(left_out)} notes reached: left_out")
    if cut_sections:
        limits.append(f"{cut_sections} sections: omitted")
    seeds = sum(1 for n in notes if n.depth == 0)
    return ContextAnswer(note, query, notes, used, max_tokens, left_out, walk.traversal,
                         Metadata(walk.reached, seeds, len(notes) - seeds, walk.depth,
                                  limits), index, follow or None)


@dataclass(frozen=True)
class Walk:
    """What the traversal behind a bundle says of itself (kbase_ci.query.traversalinfo)."""

    traversal: LinkTraversal
    reached: int
    depth: str
    """The depth asked for (a preset's name, or hops)."""
    limits: tuple[str, ...]
    """What the walk itself left out (hops it capped)."""
