"""Where `context` starts: how deep it goes (`Depth`, the presets), its seed notes (the
note asked for, or the top search hits) and the notes of each followed tag."""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence

from kbase_ci.errors import UsageError
from kbase_ci.query.search import search_answer
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



def pick_seeds(view: QueryView, note: str | None, query: str | None,
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


def tag_groups(view: QueryView, follow: Sequence[str], node: dict[str, int]
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
