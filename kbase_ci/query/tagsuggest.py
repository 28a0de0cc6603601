"""`kbase tags suggest NOTE`: tags a note probably lacks, from the notes most like it.

Votes come from the note's neighbours: its precomputed similar notes (embedding
similarity, in the index when it has vectors), weighted by their score, and the notes it
links with either way, weighted 0.5 (one hop) and 0.25 (two hops). A tag's score is the
sum of the votes of the neighbours carrying it, divided by how common the tag is in the
vault (`1 + log(notes with it)`): a tag every note has says little. Tags the note has,
and tags above one it has (`rust` when it has `rust/async`), are not suggested.
Model-free when the index has no vectors (links alone then).
"""

from __future__ import annotations

import math

from kbase_ci.errors import UsageError
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.graph import NoteGraph
from kbase_ci.query.trace import Trace
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field

LINK_WEIGHTS = {1: 0.5, 2: 0.25}
MAX_FROM = 5


def _covered(tag: str, have: set[str]) -> bool:
    """The note has `tag`, or a tag below it (`rust` when it has `rust/async`). A tag
    below one it has is still suggested: it says more."""
    low = tag.casefold()
    return any(low == h or h.startswith(low + "/") for h in have)


class Suggestion(Record):
    tag: str
    score: float
    sources: list[str] = json_field(key="from")
    """The neighbours voting for it, most weight first."""
    votes: int
    notes_with_tag: int


class SuggestAnswer(Record):
    note: str = json_field(keep=True)
    title: str
    tags: list[str] = json_field(primary=True)
    neighbours: int
    suggestions: list[Suggestion]
    index: IndexInfo


def suggest_answer(view: QueryView, note: str, *, limit: int = 5) -> SuggestAnswer:
    if limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")
    trace = Trace("tags-suggest")
    path = view.lookup(note)
    info = view.notes[path]
    have = {t.casefold() for t in info.tags}
    votes: dict[str, float] = {}
    for p, score in info.similar:
        if p in view.notes and p != path and score > 0:
            votes[p] = votes.get(p, 0.0) + float(score)
    graph = NoteGraph(view.edges)
    for n, hops in graph.neighbourhood(graph.node[path], 2).items():
        p = graph.paths[n]
        if hops in LINK_WEIGHTS and p != path:
            votes[p] = votes.get(p, 0.0) + LINK_WEIGHTS[hops]
    used: dict[str, int] = {}
    spelled: dict[str, str] = {}
    for other in view.notes.values():
        for t in other.tags:
            key = t.casefold()
            used[key] = used.get(key, 0) + 1
            spelled.setdefault(key, t)
    scores: dict[str, float] = {}
    sources: dict[str, list[tuple[float, str]]] = {}
    for p, weight in votes.items():
        for t in view.notes[p].tags:
            key = t.casefold()
            if _covered(key, have):
                continue
            scores[key] = scores.get(key, 0.0) + weight
            sources.setdefault(key, []).append((weight, p))
    ranked = sorted(scores, key=lambda k: (-scores[k] / (1 + math.log(used[k])), k))
    out = []
    for key in ranked[:limit]:
        score = round(scores[key] / (1 + math.log(used[key])), 3)
        froms = [p for _, p in sorted(sources[key], key=lambda x: (-x[0], x[1]))[:MAX_FROM]]
        out.append(Suggestion(spelled[key], score, froms, len(sources[key]), used[key]))
        trace("suggest", tag=spelled[key], score=score, votes=len(sources[key]))
    return SuggestAnswer(path, info.title, list(info.tags), len(votes), out, view.index_info())
