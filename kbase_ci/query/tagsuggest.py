"""`kbase tags suggest NOTE`: tags a note probably lacks, from the notes most like it.

Votes come from the note's neighbours: its precomputed similar notes (embedding
similarity, in the index when it has vectors), weighted by their score, and the notes it
links with either way, weighted 0.5 (one hop) and 0.25 (two hops). A tag's votes are
summed over the neighbours carrying it, then weighed by how well it goes with the tags
the note already has: for each, the notes having both, against as many as chance would
give (`together + 1` over `expected + 1`, at most 1). A tag that takes the place of one
the note has (`incubating` beside `seedling`, `evergreen`: never on one note together)
is an alternative to it, not a tag it lacks; before this weighing such a tag, common
among the neighbours, came first (issue 31). Tags the note has, and tags above one it
has (`rust` when it has `rust/async`), are not suggested. Model-free when the index has
no vectors (links alone then). bench/tag_suggest.py measures it on held-out notes.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated

from kbase_ci.errors import UsageError
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.graph import NoteGraph
from kbase_ci.query.spec import MAX_LIMIT, Note, Param, Query, Session
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
    tags: list[str]
    neighbours: int
    suggestions: list[Suggestion]
    index: IndexInfo


def votes(view: QueryView, path: str) -> dict[str, float]:
    """The neighbours of note `path` and the weight of each one's vote."""
    info = view.notes[path]
    got: dict[str, float] = {}
    for p, score in info.similar:
        if p in view.notes and p != path and score > 0:
            got[p] = got.get(p, 0.0) + float(score)
    graph = NoteGraph(view.edges)
    for n, hops in graph.neighbourhood(graph.node[path], 2).items():
        p = graph.paths[n]
        if hops in LINK_WEIGHTS and p != path:
            got[p] = got.get(p, 0.0) + LINK_WEIGHTS[hops]
    return got


def tag_sets(view: QueryView) -> dict[str, set[str]]:
    """Each note's tags, casefolded."""
    return {p: {t.casefold() for t in info.tags} for p, info in view.notes.items()}


class Ranked(Record):
    tag: str
    """Casefolded."""
    score: float
    votes: list[tuple[float, str]]
    """(weight, neighbour) of each vote."""


def rank(neighbours: dict[str, float], have: set[str], tagsets: dict[str, set[str]]
         ) -> list[Ranked]:
    """Every tag the `neighbours` of a note having `have` vote for (their weights:
    `votes`), but those `have` covers, best first (see the module docstring); `tagsets`:
    every note's tags."""
    used = Counter(t for tags in tagsets.values() for t in tags)
    together: dict[str, Counter[str]] = {h: Counter() for h in have}
    for tags in tagsets.values():  # a note with k tags pairs each with k - 1 others
        for h in have & tags:
            together[h].update(dict.fromkeys(tags, 1 / max(1, len(tags) - 1)))
    scores: dict[str, float] = {}
    sources: dict[str, list[tuple[float, str]]] = {}
    for p, weight in neighbours.items():
        for key in tagsets[p]:
            if _covered(key, have):
                continue
            scores[key] = scores.get(key, 0.0) + weight
            sources.setdefault(key, []).append((weight, p))
    final = {}
    for key, score in scores.items():
        for h in sorted(have):  # a fixed order: float products differ by the last bits
            expected = used[key] * used[h] / len(tagsets)
            score *= min(1.0, (together[h][key] + 1) / (expected + 1))
        final[key] = score
    return [Ranked(k, final[k], sources[k]) for k in sorted(final, key=lambda k: (-final[k], k))]


def suggest_answer(view: QueryView, note: str, *, limit: int = 5) -> SuggestAnswer:
    if limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")
    trace = Trace("tags-suggest")
    path = view.lookup(note)
    info = view.notes[path]
    tagsets = tag_sets(view)
    used = Counter(t for tags in tagsets.values() for t in tags)
    spelled: dict[str, str] = {}
    for other in view.notes.values():
        for t in other.tags:
            spelled.setdefault(t.casefold(), t)
    neighbours = votes(view, path)
    out = []
    for r in rank(neighbours, tagsets[path], tagsets)[:limit]:
        score = round(r.score, 3)
        froms = [p for _, p in sorted(r.votes, key=lambda x: (-x[0], x[1]))[:MAX_FROM]]
        out.append(Suggestion(spelled[r.tag], score, froms, len(r.votes), used[r.tag]))
        trace("suggest", tag=spelled[r.tag], score=score, votes=len(r.votes))
    return SuggestAnswer(path, info.title, list(info.tags), len(neighbours), out,
                         view.index_info())


class SuggestParams(Record):
    note: Note
    limit: Annotated[int, Param(ge=1, le=MAX_LIMIT, tool_le=100, help="most tags (default: 5)",
                                tool="")] = 5


def _suggest(s: Session, p: SuggestParams) -> SuggestAnswer:
    return suggest_answer(s.view(), p.note, limit=p.limit)


QUERIES = [Query(
    "tags_suggest", ("tags", "suggest"),
    help="tags a note probably lacks, from similar notes",
    description="Tags of the notes most like NOTE (similar notes from the index's vectors, "
                "and the notes it links with) that NOTE lacks, scored by how many of them "
                "carry the tag and how rare it is. Exit 0 suggestions, 1 none, 2 no such "
                "note.",
    fold=("tags", "suggest"),
    params=SuggestParams, run=_suggest,
    text=lambda a: [f"#{s.tag}  {s.score}  (from {', '.join(s.sources)})"
                    for s in a.suggestions]
    or [f"no tag to suggest for {a.note} (from {a.neighbours} similar or linked notes)"],
    found=lambda a: bool(a.suggestions), lists=("suggestions", "tags"))]
