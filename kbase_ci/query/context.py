"""`context`: what an agent should read about a note or a question, within a token budget.

Seeds (the note, or the top search hits: query/contextseeds.py), a ranked bidirectional
traversal from them (query/traverse.py), then the bundle's sections ranked by what the
agent needs (query/sectionrank.py: the query's words, the links that joined the notes)
and packed into the budget best first (query/sectionfit.py), the last one cut at a
paragraph to fill what is left. The answer says why each note is there and what was left out.
"""

from __future__ import annotations

from collections.abc import Sequence

from kbase_ci.errors import UsageError
from kbase_ci.query.answer import Truncated
from kbase_ci.query.budget import estimate_tokens
from kbase_ci.query.bundle import Bundle, header_line, separator
from kbase_ci.query.bundle import concise as concise_form
from kbase_ci.query.contextseeds import parse_depth, pick_seeds, tag_groups
from kbase_ci.query.filters import check_tags
from kbase_ci.query.payload import cost, cut_stale, dumps
from kbase_ci.query.payload import fit as fit_payload
from kbase_ci.query.pieces import JOIN_TOKENS, load_sections
from kbase_ci.query.sectionfit import Walk, bundle_answer, fit_sections, priorities
from kbase_ci.query.traversalinfo import LinkTraversal, per_hop
from kbase_ci.query.traverse import FRONTIER_MAX, select, traverse, view_graph
from kbase_ci.query.view import QueryView

STALE_NOTICE_TOKENS = 40
"""Reserved when notes changed since the index: `emit` then prints one more line."""
REFILL_TRIES = 8
"""Bundles tried to give the text back what a smaller budget freed (`refill`)."""
REFILL_STEP = 16
"""Tokens of text not worth another try."""
LISTS = ("notes",)
"""What a bundle is for, cut last when even its text is too much (the query registry
names it: kbase_ci.query.tools.context)."""


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
    seeds, seed_why, relevance = pick_seeds(view, note, query, preset)
    graph = view_graph(view)
    # An unknown tag exits 2 as every tag filter does (not an answer without its notes).
    follow = sorted(set(check_tags(view, follow_tags)))
    if strategy == "tags" and not follow:
        follow = sorted({t.casefold() for s in seeds for t in view.notes[s].tags})
    groups, tags_of = tag_groups(view, follow, graph.node) if follow else ({}, {})
    trav = traverse(graph, seeds, preset.hops, relevance=relevance,
                    beta=2.0 if strategy == "importance" else 1.0,
                    tag_groups=groups, tags_of=tags_of)
    seed_order = sorted(seeds, key=lambda p: (-seeds[p], p))
    picked = select(trav, seed_order, preset.notes,
                    "depth" if strategy == "breadth" else "score")
    unlisted = len(trav.reached) - len(picked)
    walk = Walk(LinkTraversal(trav.links_found, trav.links_followed,
                              max((r.depth for r in trav.reached.values()), default=0),
                              strategy, per_hop(r.depth for r in trav.reached.values())),
                len(trav.reached), preset.name,
                ((f"each hop expanded its {FRONTIER_MAX} most activated notes only",)
                 if trav.capped else ())
                + ((f"{unlisted} notes reached past {preset.name}'s {preset.notes}: not "
                    "listed",) if unlisted > 0 else ()))
    reserve = estimate_tokens(header_line(99, max_tokens, max_tokens))
    if view.fresh.stale:  # the text form ends with a one-line "index is older" notice
        reserve += STALE_NOTICE_TOKENS
    loaded = [load_sections(view, r) for r in picked]
    prio = priorities(view, loaded, seeds, query)

    def bundle(budget: int, most: int) -> Bundle:
        notes = loaded[:most]
        left_out = [n.reached.path for n in loaded[most:]]
        # A note's parents must stay in the bundle, so drop and refill until stable.
        while True:
            fit = fit_sections(notes, seed_why, budget, prio)
            if len(fit.notes) == len(notes):
                break
            left_out = [n.reached.path for n in notes if n.reached.path not in fit.chosen] \
                + left_out
            notes = fit.notes
        answer = bundle_answer(note, query, max_tokens, follow, fit,
                               fit.used + reserve + JOIN_TOKENS, left_out, walk, index)
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
    marks = (type(answer).budget_keys(), LISTS)

    def fits(a: Bundle) -> bool:
        return cost(dumps(a.to_json())) <= max_tokens

    def refill(answer: Bundle, budget: int, too_big: int) -> Bundle:
        """The answer with the largest text budget below `too_big` whose JSON fits: a
        smaller budget often freed more than it had to (a whole section, a note's
        envelope), which the text may take back."""
        lo, hi = budget, too_big - 1
        for _ in range(REFILL_TRIES):
            if hi - lo <= REFILL_STEP:
                break
            mid = (lo + hi + 1) // 2
            tried = bundle(mid, most)
            if fits(tried):
                lo, answer = mid, tried
            else:
                hi = mid - 1
        return answer

    first = too_big = budget + 1  # the smallest text budget over, for `most` notes
    for _ in range(len(loaded) + 8):
        if fits(answer):
            if too_big != first or budget != first - 1:
                answer = refill(answer, budget, too_big)
            if stale_cut is not None:
                spent = cost(dumps(answer.to_json()))
                answer = answer._replace(truncated=stale_cut._replace(tokens=spent))
            return answer
        over = cost(dumps(answer.to_json())) - max_tokens
        too_big = min(too_big, budget)
        # From what the text used, not what it was given: a smaller budget that still
        # holds the same sections changes nothing.
        used = answer.tokens - reserve - JOIN_TOKENS
        if budget > floor and (used - over - 8 >= max_tokens // 4 or most <= 1):
            budget = max(floor, min(budget, used) - over - 8)
        elif most > 1:
            most -= 1
            too_big = first  # fewer notes: the budgets that were over may fit now
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
