"""Ranked bidirectional traversal of the link graph from seed notes, for `kbase context`.

Activation spreads from the seeds one hop at a time, over links in both directions
(and, when tags are followed, between notes sharing a followed tag). A note passes its
activation on split evenly among its neighbours, like one step of a random walk: an
index note linking to 200 notes gives each of them 1/200 of its share, so hubs cannot
flood a bundle, while a note with three links gives each neighbour a third. A note's
score multiplies its activation by its relevance (search rank or embedding similarity)
and its backlink count; docs/context.md has the formula.
"""

from __future__ import annotations

import heapq
import math
import weakref
from collections.abc import Mapping, Sequence

from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record

FRONTIER_MAX = 400
"""Notes expanded per hop (the most activated); beyond it a deep traversal of a dense
vault would touch every note for candidates that could never make the bundle."""


class LinkGraph:
    """Undirected neighbour lists of the view's note graph, remembering link direction."""

    def __init__(self, paths: Sequence[str], pairs: Sequence[tuple[int, int]]) -> None:
        self.paths = tuple(paths)
        self.node = {p: i for i, p in enumerate(self.paths)}
        out: list[list[int]] = [[] for _ in self.paths]
        inc: list[list[int]] = [[] for _ in self.paths]
        for a, b in pairs:
            out[a].append(b)
            inc[b].append(a)
        self.out = out
        self.inc = inc

    def backlink_count(self, n: int) -> int:
        return len(self.inc[n])

    def neighbours(self, n: int) -> list[tuple[int, str]]:
        """(node, relation) sorted by node; relation as seen from `n`: `outlink` (n links
        to it), `backlink` (it links to n) or `mutual`."""
        rel: dict[int, str] = {m: "outlink" for m in self.out[n]}
        for m in self.inc[n]:
            rel[m] = "mutual" if m in rel else "backlink"
        return sorted(rel.items())


_GRAPHS: weakref.WeakKeyDictionary[QueryView, LinkGraph] = weakref.WeakKeyDictionary()


def view_graph(view: QueryView) -> LinkGraph:
    """The view's graph, built once per view (a long-lived server asks many times)."""
    graph = _GRAPHS.get(view)
    if graph is None:
        edges = view.edges
        graph = _GRAPHS[view] = LinkGraph(edges.paths, edges.pairs)
    return graph


class Reached(Record):
    path: str
    depth: int
    activation: float
    score: float
    backlinks: int
    relevance: float
    parents: tuple[tuple[str, str], ...]
    """(note one hop nearer the seeds, relation from that note) in node order."""


class Traversal(Record):
    reached: dict[str, Reached]
    """Every note reached, seeds included (depth 0)."""
    links_found: int
    """Distinct links touching the notes expanded."""
    links_followed: int
    """Neighbour steps taken (a link or a shared tag) while expanding."""
    capped: bool
    """True when some hop had more than FRONTIER_MAX notes to expand."""


def traverse(graph: LinkGraph, seeds: Mapping[str, float], hops: int, *,
             relevance: Mapping[str, float], beta: float,
             tag_groups: Mapping[str, Sequence[int]] | None = None,
             tags_of: Mapping[int, Sequence[str]] | None = None) -> Traversal:
    """Spread activation `hops` hops from `seeds` (path -> starting activation).

    `tag_groups` (tag -> member nodes) and `tags_of` (node -> followed tags it has) make
    notes sharing a followed tag neighbours, through the tag as a virtual hub (each
    member gets 1/size of the activation its members pooled there)."""
    dist: dict[int, int] = {}
    act: dict[int, float] = {}
    parents: dict[int, list[tuple[int, str]]] = {}
    for path, a in seeds.items():
        n = graph.node[path]
        dist[n] = 0
        act[n] = a
    frontier = sorted(dist)
    nxt: set[int] = set()

    def _arrive(m: int, depth: int, u: int, relation: str, amount: float) -> None:
        d = dist.get(m)
        if d is not None and d < depth:
            return  # already nearer the seeds: a cycle or a shortcut
        if d is None:
            dist[m] = depth
            nxt.add(m)
        act[m] = act.get(m, 0.0) + amount
        parents.setdefault(m, []).append((u, relation))

    found: set[tuple[int, int]] = set()
    followed = 0
    capped = False
    for depth in range(1, hops + 1):
        if len(frontier) > FRONTIER_MAX:
            capped = True
            frontier = sorted(sorted(frontier, key=lambda n: (-act[n], n))[:FRONTIER_MAX])
        nxt.clear()
        for u in frontier:
            steps = graph.neighbours(u)
            for m, _ in steps:
                found.add((min(u, m), max(u, m)))
            share = act[u] / len(steps) if steps else 0.0
            followed += len(steps)
            for m, relation in steps:
                _arrive(m, depth, u, relation, share)
        if tag_groups and tags_of:
            # A tag is a virtual hub: its members' activation pools there and spreads
            # back evenly, once per hop (not once per member pair).
            pooled: dict[str, tuple[float, int]] = {}
            for u in frontier:
                for tag in tags_of.get(u, ()):
                    got, first = pooled.get(tag, (0.0, u))
                    pooled[tag] = (got + act[u], first if act[first] >= act[u] else u)
            for tag in sorted(pooled):
                group = tag_groups[tag]
                total, via = pooled[tag]
                for m in group:
                    followed += 1
                    _arrive(m, depth, via, f"tag:{tag}", total / len(group))
        frontier = sorted(nxt)
        if not frontier:
            break
    reached: dict[str, Reached] = {}
    for n, d in dist.items():
        path = graph.paths[n]
        bl = graph.backlink_count(n)
        rel = relevance.get(path, 0.0)
        score = act[n] * (1.0 + rel) * (1.0 + math.log1p(bl)) ** beta
        plist = sorted({(graph.paths[p], r) for p, r in parents.get(n, [])})
        reached[path] = Reached(path, d, act[n], score, bl, rel, tuple(plist))
    return Traversal(reached, len(found), followed, capped)


def select(traversal: Traversal, seeds: Sequence[str], limit: int,
           order: str) -> list[Reached]:
    """The seeds, then up to `limit` notes in all, best first, each joining only once one
    of its parents has joined (so every note's `linked_from` is in the bundle).
    `order`: `depth` (nearest first, then score) or `score`."""
    reached = traversal.reached
    chosen = [reached[s] for s in seeds]
    taken = set(seeds)
    children: dict[str, list[str]] = {}
    for r in reached.values():
        for p, _ in r.parents:
            children.setdefault(p, []).append(r.path)

    def key(r: Reached) -> tuple[float, float, str]:
        first = float(r.depth) if order == "depth" else 0.0
        return (first, -r.score, r.path)

    heap: list[tuple[tuple[float, float, str], str]] = []

    def offer(parent: str) -> None:
        for c in children.get(parent, ()):
            if c not in taken:
                heapq.heappush(heap, (key(reached[c]), c))

    for s in seeds:
        offer(s)
    while heap and len(chosen) < limit:
        _, path = heapq.heappop(heap)
        if path in taken:
            continue
        taken.add(path)
        chosen.append(reached[path])
        offer(path)
    return chosen
