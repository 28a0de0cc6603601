"""`context`: what an agent should read about a note or a question, within a token budget.

Seeds (the note, or the top search hits: query/contextseeds.py), a ranked bidirectional
traversal from them (query/traverse.py), then the bundle's sections ranked by what the
agent needs (query/sectionrank.py: the query's words, the links that joined the notes)
and packed into the budget best first (query/sectionfit.py), the last one cut at a
paragraph to fill what is left. The answer says why each note is there and what was left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from kbase_ci.errors import UsageError
from kbase_ci.query.answer import Truncated
from kbase_ci.query.budget import estimate_tokens
from kbase_ci.query.bundle import Bundle, header_line, separator, text_lines
from kbase_ci.query.bundle import concise as concise_form
from kbase_ci.query.choices import MAX_BUDGET, STRATEGIES
from kbase_ci.query.contextseeds import parse_depth, pick_seeds, tag_groups
from kbase_ci.query.filters import check_tags
from kbase_ci.query.payload import cost, cut_stale, dumps
from kbase_ci.query.payload import fit as fit_payload
from kbase_ci.query.pieces import JOIN_TOKENS, load_sections
from kbase_ci.query.sectionfit import Walk, bundle_answer, fit_sections, priorities
from kbase_ci.query.spec import (
    BUDGET,
    BUDGET_ARG,
    MAX_TOKENS,
    Param,
    Query,
    Session,
    none_if_blank,
)
from kbase_ci.query.traversalinfo import LinkTraversal, per_hop
from kbase_ci.query.traverse import FRONTIER_MAX, select, traverse, view_graph
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record

STALE_NOTICE_TOKENS = 40
"""Reserved when notes changed since the index: `emit` then prints one more line."""
REFILL_TRIES = 8
"""Bundles tried to give the text back what a smaller budget freed (`refill`)."""
REFILL_STEP = 16
"""Tokens of text not worth another try."""
LISTS = ("notes",)
"""What a bundle is for, cut last when even its text is too much (the query registry
names it: `QUERIES` below)."""


def context_answer(view: QueryView, *, note: str | None = None, query: str | None = None,
                   strategy: str = "breadth", depth: str | int = "standard",
                   max_tokens: int = 8000, follow_tags: Sequence[str] = (),
                   concise: bool = False, json_budget: bool = True) -> Bundle:
    """The bundle. `json_budget`: `max_tokens` bounds the answer's JSON, envelope and
    all, as printed compact (kbase_ci.query.payload); otherwise it bounds the text form.
    `concise`: the notes and sections to read, without their text. `strategy`: one of
    `choices.STRATEGIES` (a call is checked by its declaration, kbase_ci.query.registry)."""
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


class ContextParams(Record):
    note: Annotated[str | None, Param(
        positional=True, metavar="NOTE", help="note path, name or alias to start from",
        tool="")] = None
    query: Annotated[str | None, Param(
        metavar="Q", help="start from the best search hits for Q instead of a note",
        tool="Or start from its search hits.")] = None
    max_tokens: Annotated[int, BUDGET_ARG.param, Param(
        help=BUDGET + " (0: no limit; default: %(default)s)")] = MAX_TOKENS
    depth: Annotated[str, Param(
        metavar="quick|standard|deep|N",
        help="quick: 1 hop, 3 notes; standard: 2 hops, 7 notes; deep: 3 hops, 20 notes; N: "
             "N hops (default: %(default)s)",
        tool="quick, standard, deep or hops.")
    ] = "standard"
    strategy: Annotated[str, Param(
        choices=STRATEGIES, enum=False,
        help="breadth: nearest first; importance: best score first (backlinks weigh more); "
             "tags: also follow notes sharing tags (default: %(default)s)",
        tool="breadth, importance or tags.")] = "breadth"
    follow_tags: Annotated[tuple[str, ...], Param(
        metavar="T",
        help="notes with tag T (or below it) join the traversal; repeatable (with "
             "--strategy tags the default is the start notes' tags)",
        tool="")] = ()
    concise: Annotated[bool, Param(
        help="which notes and sections to read, without their text",
        tool="What to read, no text.")] = False


def _prepare(p: ContextParams) -> ContextParams:
    note, query = none_if_blank(p.note), none_if_blank(p.query)
    if note is None and query is None:
        raise UsageError("give a NOTE (to start from it) or a --query (to start from the "
                         "best search hits)", parameter="note")
    if note is not None and query is not None:
        raise UsageError("give a NOTE or --query, not both", parameter="query")
    # 0 is no limit, as for every query command (kbase_ci.query.payload.check_budget)
    return ContextParams(note, query, p.max_tokens or MAX_BUDGET, p.depth.strip(),
                         p.strategy, p.follow_tags, p.concise)


def _run(s: Session, p: ContextParams) -> Bundle:
    return context_answer(s.view(), note=p.note, query=p.query, strategy=p.strategy,
                          depth=p.depth, max_tokens=p.max_tokens, follow_tags=p.follow_tags,
                          concise=p.concise, json_budget=s.form == "json")


def _lists(p: ContextParams) -> tuple[str, ...]:
    return LISTS


def _lines(a: Bundle) -> list[str]:
    return text_lines(a)


QUERIES = [Query(
    "context", ("context",),
    help="a token-budgeted reading bundle around a note or a question",
    description="Bidirectional link traversal from NOTE (or from the top search hits for "
                "--query), hubs damped; sections ranked by the query or the links and "
                "packed into --max-tokens "
                "(conservative offline token estimate; see docs/context.md). "
                "Exit 0 notes, 1 nothing found, 2 no such note or bad arguments.",
    tool="The text of the notes most relevant to a note or a query within a token budget, best "
         "sections first. One call for many `read`s.",
    when="the text of several related notes within a token budget, best sections first",
    params=ContextParams, run=_run, text=_lines, found=lambda a: bool(a.notes),
    lists=_lists, prepare=_prepare, budgeted=True)]
