"""`context`: what an agent should read about a note or a question, within a token budget.

Seeds (the note, or the top search hits), a ranked bidirectional traversal from them
(query/traverse.py), then the bundle's sections ranked by what the agent needs
(query/sectionrank.py: the query's words, the links that joined the notes) and packed
into the budget best first (query/budget.py), the last one cut at a paragraph to fill
what is left. The answer says why each note is there and what was left out.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

from kbase_ci.errors import UsageError
from kbase_ci.query import sectionrank as rank
from kbase_ci.query.answer import IndexInfo, Truncated
from kbase_ci.query.budget import Piece, estimate_tokens, pack
from kbase_ci.query.bundle import (
    Bundle,
    BundledNote,
    ContextAnswer,
    header_line,
    separator,
)
from kbase_ci.query.bundle import concise as concise_form
from kbase_ci.query.filters import check_tags
from kbase_ci.query.payload import cost, cut_stale, dumps
from kbase_ci.query.payload import fit as fit_payload
from kbase_ci.query.pieces import (
    JOIN_TOKENS,
    NoteSections,
    chosen_text,
    cut,
    load_sections,
    most_relevant,
    section_title,
)
from kbase_ci.query.search import search_answer
from kbase_ci.query.traverse import Reached, select, traverse, view_graph
from kbase_ci.query.verdict import ConciseHit, Hit
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record


class Depth(Record):
    name: str
    hops: int
    notes: int
    """At most this many notes in the bundle, seeds included."""
    seeds: int
    """Search hits used as seeds for `--query`."""


PRESETS = {"quick": Depth("quick", 1, 3, 1), "standard": Depth("standard", 2, 7, 2),
           "deep": Depth("deep", 3, 20, 4)}
SEARCH_POOL = 50
"""Search hits whose rank counts as relevance for `--query` (seeds are the first few)."""
STALE_NOTICE_TOKENS = 40
"""Reserved when notes changed since the index: `emit` then prints one more line."""


def parse_depth(depth: str | int) -> Depth:
    if isinstance(depth, str) and depth in PRESETS:
        return PRESETS[depth]
    try:
        hops = int(depth)
    except ValueError:
        raise UsageError(f"--depth must be quick, standard, deep or a number of hops, "
                         f"not {depth!r}") from None
    if not 0 <= hops <= 10:
        raise UsageError(f"--depth {hops}: use 0 to 10 hops")
    notes = 3 if hops <= 1 else 7 if hops == 2 else 20
    return Depth(str(hops), hops, notes, min(4, max(1, hops)))


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


def _seeds(view: QueryView, note: str | None, query: str | None,
           depth: Depth) -> tuple[dict[str, float], dict[str, str], dict[str, float]]:
    """(seed -> activation, seed -> why, path -> relevance)."""
    if (note is None) == (query is None):
        raise UsageError("give a NOTE or --query, not both")
    if note is not None:
        path = view.lookup(note)
        return {path: 1.0}, {path: "the note asked for"}, {
            p: max(0.0, s) for p, s in view.notes[path].similar if p in view.notes}

    assert query is not None
    hits: Sequence[Hit | ConciseHit] = search_answer(view, query, limit=SEARCH_POOL,
                                                     concise=True).results
    relevance = {h.path: 1.0 / math.sqrt(rank) for rank, h in enumerate(hits, 1)}
    top = [h.path for h in hits[:max(1, depth.seeds)]]
    return ({p: relevance[p] for p in top},
            {p: f"search hit #{rank}" for rank, p in enumerate(top, 1)}, relevance)


_TAGS: weakref.WeakKeyDictionary[QueryView, dict[str, list[str]]] = (
    weakref.WeakKeyDictionary())


def _tag_groups(view: QueryView, follow: Sequence[str], node: dict[str, int]
                ) -> tuple[dict[str, list[int]], dict[int, list[str]]]:
    """Members of each followed tag (itself or below it) as node numbers, and the followed
    tags of each member. The tag -> notes table is built once per view."""
    table = _TAGS.get(view)
    if table is None:
        table = {}
        for info in view.notes.values():
            for t in info.tags:
                table.setdefault(t.casefold(), []).append(info.path)
        _TAGS[view] = table
    groups: dict[str, list[int]] = {}
    tags_of: dict[int, list[str]] = {}
    for want in follow:
        members = sorted({node[p] for t, paths in table.items()
                          if t == want or t.startswith(want + "/") for p in paths})
        groups[want] = members
        for m in members:
            tags_of.setdefault(m, []).append(want)
    return groups, tags_of


def context_answer(view: QueryView, *, note: str | None = None, query: str | None = None,
                   strategy: str = "breadth", depth: str | int = "standard",
                   max_tokens: int = 8000, follow_tags: Sequence[str] = (),
                   concise: bool = False, json_budget: bool = True) -> Bundle:
    """The bundle. `json_budget`: `max_tokens` bounds the answer's JSON, envelope and
    all, as printed compact (kbase_ci.query.payload); otherwise it bounds the text form.
    `concise`: the notes and sections to read, without their text. `strategy`: one of
    `choices.STRATEGIES` (a call is checked by its declaration, kbase_ci.query.tools)."""
    if max_tokens < 1:
        raise UsageError("--max-tokens must be a positive number")
    preset = parse_depth(depth)
    seeds, seed_why, relevance = _seeds(view, note, query, preset)
    graph = view_graph(view)
    # An unknown tag exits 2 as every tag filter does (not an answer without its notes).
    follow = sorted(set(check_tags(view, follow_tags)))
    if strategy == "tags" and not follow:
        follow = sorted({t.casefold() for s in seeds for t in view.notes[s].tags})
    groups, tags_of = _tag_groups(view, follow, graph.node) if follow else ({}, {})
    trav = traverse(graph, seeds, preset.hops, relevance=relevance,
                    beta=2.0 if strategy == "importance" else 1.0,
                    tag_groups=groups, tags_of=tags_of)
    seed_order = sorted(seeds, key=lambda p: (-seeds[p], p))
    picked = select(trav, seed_order, preset.notes,
                    "depth" if strategy == "breadth" else "score")
    reserve = estimate_tokens(header_line(99, max_tokens, max_tokens))
    if view.fresh.stale:  # the text form ends with a one-line "index is older" notice
        reserve += STALE_NOTICE_TOKENS
    loaded = [load_sections(view, r) for r in picked]
    prio = _priorities(view, loaded, seeds, query)

    def bundle(budget: int, most: int) -> Bundle:
        notes = loaded[:most]
        left_out = [n.reached.path for n in loaded[most:]]
        # A note's parents must stay in the bundle, so drop and refill until stable.
        while True:
            fit = _fit(notes, seed_why, budget, prio)
            if len(fit.notes) == len(notes):
                break
            left_out = [n.reached.path for n in notes if n.reached.path not in fit.chosen] \
                + left_out
            notes = fit.notes
        answer = _answer(note, query, max_tokens, follow, fit,
                         fit.used + reserve + JOIN_TOKENS, left_out, index)
        full = concise_form(answer) if concise else answer
        return full._replace(truncated=stale_cut)

    index = view.index_info()  # one for every try below: its stale list is cut once
    stale_cut: Truncated | None = None
    budget, most = max_tokens - reserve - JOIN_TOKENS, len(loaded)
    answer = bundle(budget, most)
    if not json_budget:
        return answer
    # The list of notes changed since the index goes before any text (`stale_count`
    # stays): many edits in a clone must not crowd the notes out.
    cut_json = answer.to_json()
    record = cut_stale(cut_json, max_tokens)
    if record is not None:
        stale_cut = Truncated.from_json(record)
        index = index._replace(stale_notes=tuple(cut_json["index"]["stale_notes"]))
        answer = answer._replace(index=index, truncated=stale_cut)
    # The JSON around the text (paths, reasons, escapes) costs too: give the text what
    # the envelope leaves, measured; when the envelopes alone are too much, fewer notes;
    # cut lists only as a last resort.
    # The seeds' header lines stay affordable: a seed with no section that fits is still
    # named, with its sections listed as omitted (the agent can read one of them).
    floor = sum(estimate_tokens(separator(p, 0, seed_why[p])) + JOIN_TOKENS
                for p in seeds)
    marks = type(answer).budget_keys()
    for _ in range(len(loaded) + 8):
        spent = cost(dumps(answer.to_json()))
        over = spent - max_tokens
        if over <= 0:
            if stale_cut is not None:
                answer = answer._replace(truncated=stale_cut._replace(tokens=spent))
            return answer
        # From what the text used, not what it was given: a smaller budget that still
        # holds the same sections changes nothing.
        used = answer.tokens - reserve - JOIN_TOKENS
        if budget > floor and (used - over - 8 >= max_tokens // 4 or most <= 1):
            budget = max(floor, min(budget, used) - over - 8)
        elif most > 1:
            most -= 1
        else:
            break
        answer = bundle(budget, most)
    try:  # the seeds with their lists cut (omitted sections, notes left out)
        return type(answer).from_json(fit_payload(answer.to_json(), max_tokens, marks,
                                                  fields=False))
    except UsageError:  # not even the seeds' names fit: an empty bundle says why
        empty = bundle(1, most)
        return type(empty).from_json(fit_payload(empty.to_json(), max_tokens, marks,
                                                 fields=False))


NEIGHBOUR = 0.5
"""A linked note's weight beside a seed's (1, or a search hit's 1/sqrt(rank)), falling as
1/sqrt of its place among the linked notes: its sections come after a seed's relevant
ones, before a seed's unrelated ones when they match the query."""


def _priorities(view: QueryView, loaded: list[NoteSections], seeds: dict[str, float],
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
class _Fit:
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


def _fit(loaded: list[NoteSections], seed_why: dict[str, str], budget: int,
         prio: dict[str, list[float]]) -> _Fit:
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
    fit = _Fit([], {}, used, set(), why,
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


def _answer(note: str | None, query: str | None, max_tokens: int, follow: list[str],
            fit: _Fit, used: int, left_out: list[str], index: IndexInfo) -> ContextAnswer:
    notes: list[BundledNote] = []
    for n in fit.notes:
        r = n.reached
        picks = fit.chosen[r.path]
        partial = fit.partial.get(r.path)
        omitted = _omitted(n, picks, fit.prio[r.path])
        if partial is not None and partial[1] < n.pieces[partial[0]][2]:
            omitted.append(f"{section_title(n.pieces[partial[0]][0])} "
                           f"(from line {partial[1] + 1})")
        lines, text = chosen_text(n, picks, partial)
        notes.append(BundledNote(r.path, r.depth, fit.why[r.path], lines, omitted, text))
    return ContextAnswer(note, query, notes, used, max_tokens, left_out, index,
                         follow or None)
