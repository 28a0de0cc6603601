"""`context`: what an agent should read about a note or a question, within a token budget.

Seeds (the note, or the top search hits), a ranked bidirectional traversal from them
(query/traverse.py), then the bundle cut to the budget at section boundaries
(query/budget.py). The answer says what was followed, what was cut and why.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

from kbase_ci.errors import UsageError
from kbase_ci.query.answer import IndexInfo, Truncated
from kbase_ci.query.budget import Piece, estimate_tokens, fill
from kbase_ci.query.bundle import (
    AnalysisDepth,
    Bundle,
    BundledNote,
    ContextAnswer,
    IndexVersion,
    LinkTraversal,
    Metadata,
    Relation,
    Section,
    TraversalStep,
    header_line,
    separator,
)
from kbase_ci.query.bundle import concise as concise_form
from kbase_ci.query.filters import check_tags
from kbase_ci.query.payload import cost, cut_stale, dumps
from kbase_ci.query.payload import fit as fit_payload
from kbase_ci.query.pieces import JOIN_TOKENS, NoteSections, load_sections
from kbase_ci.query.search import search_answer
from kbase_ci.query.traverse import FRONTIER_MAX, Reached, Traversal, select, traverse, view_graph
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
    reserve = estimate_tokens(header_line(preset.name, strategy, 99, max_tokens, max_tokens))
    if view.fresh.stale:  # the text form ends with a one-line "index is older" notice
        reserve += STALE_NOTICE_TOKENS
    loaded = [load_sections(view, r) for r in picked]

    def bundle(budget: int, most: int) -> Bundle:
        limitations: list[str] = []
        if trav.capped:
            limitations.append(f"only the {FRONTIER_MAX} most activated notes were "
                               "expanded per hop")
        notes = loaded[:most]
        limitations += [f"{n.reached.path}: left out, the answer's JSON would not fit"
                        for n in loaded[most:]]
        # A note's parents must stay in the bundle, so drop and refill until stable.
        while True:
            fit = _fit(notes, seed_why, budget)
            if len(fit.notes) == len(notes):
                break
            for n in notes:
                path = n.reached.path
                if path in fit.orphaned:
                    limitations.append(f"{path}: left out, the notes linking it were cut")
                elif path not in fit.chosen:
                    limitations.append(f"{path}: left out, no section fits the budget")
            notes = fit.notes
        answer = _answer(view, note, query, strategy, preset, max_tokens, follow, trav, fit,
                         fit.used + reserve + JOIN_TOKENS, limitations, index)
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
    cut = answer.to_json()
    record = cut_stale(cut, max_tokens)
    if record is not None:
        stale_cut = Truncated.from_json(record)
        index = index._replace(stale_notes=tuple(cut["index"]["stale_notes"]))
        answer = answer._replace(index=index, truncated=stale_cut)
    # The JSON around the text (records, traversal, metadata, escapes) costs too: give
    # the text what the envelope leaves, measured; when the envelopes alone are too
    # much, fewer notes; cut lists only as a last resort.
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
        # From what the text used, not what it was given: sections are whole, so a
        # smaller budget that still holds them changes nothing.
        used = answer.metadata.tokens - reserve - JOIN_TOKENS
        if budget > floor and (used - over - 8 >= max_tokens // 4 or most <= 1):
            budget = max(floor, min(budget, used) - over - 8)
        elif most > 1:
            most -= 1
        else:
            break
        answer = bundle(budget, most)
    try:  # the seeds with their lists cut (omitted sections, traversal, limitations)
        return type(answer).from_json(fit_payload(answer.to_json(), max_tokens, marks))
    except UsageError:  # not even the seeds' names fit: an empty bundle says why
        empty = bundle(1, most)
        return type(empty).from_json(fit_payload(empty.to_json(), max_tokens, marks))


@dataclass
class _Fit:
    notes: list[NoteSections]
    """The notes that survive this pass, in bundle order."""
    chosen: dict[str, list[int]]
    """Section numbers chosen per surviving note."""
    used: int
    orphaned: set[str]
    why: dict[str, str]
    linked: dict[str, list[tuple[str, str]]]
    header: dict[str, int]


def _fit(loaded: list[NoteSections], seed_why: dict[str, str], budget: int) -> _Fit:
    """One budget pass: sections chosen per note, and which notes survive it."""
    why: dict[str, str] = {}
    linked: dict[str, list[tuple[str, str]]] = {}
    kept_paths: set[str] = set()
    headers: list[int] = []
    for n in loaded:
        r = n.reached
        parents = [(p, rel) for p, rel in r.parents if p in kept_paths]
        linked[r.path] = parents
        why[r.path] = _why(r, seed_why, parents) if (parents or r.path in seed_why) else ""
        kept_paths.add(r.path)
        headers.append(estimate_tokens(separator(r.path, r.depth, why[r.path])) + JOIN_TOKENS)
    pieces = [[Piece(i, c) for i, c in enumerate(n.costs)] for n in loaded]
    # First pass: a seed may fill up to half the budget with one section, any other note
    # an even share; what is left then goes to the sections that were too big.
    share = budget // max(1, len(loaded))
    caps = [max(budget // 2, share) if n.reached.path in seed_why else share for n in loaded]
    # The seeds' header lines are kept back first: a seed none of whose sections fits
    # still shows its header, which the neighbours' sections must not have used up (the
    # bundle then lost the seed and, with it, every note reached from it).
    seeds_head = sum(h for n, h in zip(loaded, headers, strict=True)
                     if n.reached.path in seed_why)
    kept_back = seeds_head if seeds_head < budget else 0
    picked, used = fill(pieces, headers, budget - kept_back, caps)
    fit = _Fit([], {}, used, set(), why, linked,
               {n.reached.path: h for n, h in zip(loaded, headers, strict=True)})
    for n, picks, head in zip(loaded, picked, headers, strict=True):
        path = n.reached.path
        is_seed = path in seed_why
        if not is_seed and not any(p in fit.chosen for p, _ in n.reached.parents):
            fit.orphaned.add(path)
            if picks:
                fit.used -= head + sum(n.costs[i] for i in picks)
            continue
        if not picks:
            if not is_seed or head > budget - fit.used:
                continue
            fit.used += head  # a seed whose sections are all too big still shows its header
        fit.chosen[path] = picks
        fit.notes.append(n)
    return fit


def _answer(view: QueryView, note: str | None, query: str | None, strategy: str,
            preset: Depth, max_tokens: int, follow: list[str], trav: Traversal,
            fit: _Fit, used: int, limitations: list[str],
            index: IndexInfo) -> ContextAnswer:
    notes: list[BundledNote] = []
    path_steps: list[TraversalStep] = []
    why, linked = fit.why, fit.linked
    for n in fit.notes:
        r = n.reached
        picks = fit.chosen[r.path]
        info = view.notes[r.path]
        omitted = [n.pieces[i][0] or "(before the first heading)"
                   for i in range(len(n.pieces)) if i not in picks]
        if omitted:
            limitations.append(f"{r.path}: {len(omitted)} section(s) cut for the budget")
        notes.append(BundledNote(
            r.path, info.title, r.depth, r.depth == 0, why[r.path],
            [Relation(p, rel) for p, rel in linked[r.path]], round(r.score, 6), r.backlinks,
            list(info.tags), fit.header[r.path] + sum(n.costs[i] for i in picks),
            [Section(n.pieces[i][0], n.pieces[i][1], n.pieces[i][2]) for i in picks],
            omitted, bool(omitted), "\n\n".join(n.pieces[i][3] for i in picks)))
        if linked[r.path]:
            parent, rel = linked[r.path][0]
            path_steps.append(TraversalStep(parent, r.path, rel, r.depth))
    return ContextAnswer(
        note, query, notes,
        LinkTraversal(trav.links_found, trav.links_followed,
                      max((n.depth for n in notes), default=0), strategy, path_steps, follow),
        Metadata(len(trav.reached), [n.path for n in notes if n.primary],
                 [n.path for n in notes if not n.primary],
                 AnalysisDepth(preset.name, preset.hops, preset.notes), max_tokens, used,
                 "kbase-conservative-1", IndexVersion(index.source_commit, index.built_at),
                 limitations),
        index)
