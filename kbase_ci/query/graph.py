"""Whole-graph questions over the current notes' links: shortest paths, a note's
neighbourhood, hubs and orphans.

Nodes are the positions in `NoteEdges.paths` (sorted paths), so ordering by node number
is ordering by path: every tie below breaks by path without comparing strings.
A path follows links either way by default (two notes are related whichever of them
holds the link); `directed` follows links only from the note holding them.
Orphans mean what they mean in the PR report (graphstats): nobody links to the note;
an *isolated* orphan links nowhere either.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property

from kbase_ci.query.notetable import NoteEdges
from kbase_ci.typedjson import Record
from kbase_ci.vault.linkgraph import Orphan


class Edge(Record):
    """A link among the notes of a graph answer."""

    source: str
    target: str


class ClusterRecord(Record):
    """A community of linked notes (`terms`: words its titles and headings share)."""

    id: int
    size: int
    central: str
    terms: list[str]
    members: list[str]


@dataclass(frozen=True, slots=True)
class Degree:
    node: int
    incoming: int
    outgoing: int

    @property
    def total(self) -> int:
        return self.incoming + self.outgoing


@dataclass(frozen=True, slots=True)
class Paths:
    length: int | None
    """Hops of the shortest path, None when the notes are not connected."""
    paths: tuple[tuple[int, ...], ...]
    """Shortest paths in path order (the first is the one `path` shows)."""
    truncated: bool
    """More shortest paths exist than were asked for."""
    searched: Mapping[int, int]
    """Hops to the target of every note the search reached (walking back from it)."""


class NoteGraph:
    """Adjacency of one `NoteEdges` (state: lists built on first use; degrees alone are
    cheap, so hubs and orphans never build the lists)."""

    def __init__(self, edges: NoteEdges) -> None:
        self.paths = edges.paths
        self.pairs = edges.pairs
        self.node = {p: i for i, p in enumerate(edges.paths)}

    @cached_property
    def _in_out(self) -> tuple[list[int], list[int]]:
        n = len(self.paths)
        inc, out = [0] * n, [0] * n
        for a, b in self.pairs:
            out[a] += 1
            inc[b] += 1
        return inc, out

    def degree(self, node: int) -> Degree:
        inc, out = self._in_out
        return Degree(node, inc[node], out[node])

    @cached_property
    def outgoing(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in self.paths]
        for a, b in self.pairs:  # pairs are sorted, so each list comes out sorted
            out[a].append(b)
        return out

    @cached_property
    def incoming(self) -> list[list[int]]:
        inc: list[list[int]] = [[] for _ in self.paths]
        for a, b in self.pairs:
            inc[b].append(a)
        return inc

    @cached_property
    def neighbours(self) -> list[list[int]]:
        """Notes linked either way, sorted."""
        return [sorted({*o, *i}) for o, i in zip(self.outgoing, self.incoming, strict=True)]

    def _forward(self, directed: bool) -> list[list[int]]:
        return self.outgoing if directed else self.neighbours

    def adjacency(self, directed: bool, *, reverse: bool = False) -> list[list[int]]:
        """The notes each note's links lead to: either way, or (`directed`) the links it
        holds (`reverse`: the links to it)."""
        return self._backward(directed) if reverse else self._forward(directed)

    def _backward(self, directed: bool) -> list[list[int]]:
        return self.incoming if directed else self.neighbours

    # -- questions ---------------------------------------------------------------------
    def hubs(self, min_links: int) -> list[Degree]:
        """Notes with at least `min_links` distinct notes linking in plus linked out,
        most links first, ties by path."""
        inc, out = self._in_out
        found = [Degree(i, inc[i], out[i]) for i in range(len(self.paths))
                 if inc[i] + out[i] >= min_links]
        return sorted(found, key=lambda d: (-d.total, d.node))

    def orphans(self, *, no_backlinks: bool = False) -> list[Orphan]:
        """Isolated notes (no links in or out); with `no_backlinks`, every note nobody
        links to: exactly graphstats' orphans."""
        inc, out = self._in_out
        return [Orphan(p, out[i] == 0, out[i]) for i, p in enumerate(self.paths)
                if inc[i] == 0 and (no_backlinks or out[i] == 0)]

    def distances(self, start: int, *, directed: bool = False, reverse: bool = False,
                  limit: int | None = None) -> dict[int, int]:
        """Hops from `start` (to `start` with `reverse`) for every note reached, up to
        `limit` hops."""
        adj = self._backward(directed) if reverse else self._forward(directed)
        dist = {start: 0}
        queue = deque([start])
        while queue:
            u = queue.popleft()
            d = dist[u]
            if limit is not None and d >= limit:
                continue
            for v in adj[u]:
                if v not in dist:
                    dist[v] = d + 1
                    queue.append(v)
        return dist

    def shortest_paths(self, a: int, b: int, *, directed: bool = False,
                       limit: int = 1) -> Paths:
        """Up to `limit` shortest paths from `a` to `b`, in path order. Walks forward
        over the notes one hop closer to `b`, so every branch taken ends at `b`."""
        to_b = self.distances(b, directed=directed, reverse=True)
        if a not in to_b:
            return Paths(None, (), False, to_b)
        forward = self._forward(directed)
        found: list[tuple[int, ...]] = []
        truncated = False
        stack: list[tuple[int, tuple[int, ...]]] = [(a, (a,))]
        while stack:
            u, sofar = stack.pop()
            if u == b:
                if len(found) == limit:
                    truncated = True
                    break
                found.append(sofar)
                continue
            closer = [v for v in forward[u] if to_b.get(v) == to_b[u] - 1]
            stack.extend((v, (*sofar, v)) for v in reversed(closer))
        return Paths(to_b[a], tuple(found), truncated, to_b)

    def neighbourhood(self, start: int, depth: int, *, directed: bool = False
                      ) -> dict[int, int]:
        """Notes within `depth` hops of `start` (following links either way unless
        `directed`) -> hops."""
        return self.distances(start, directed=directed, limit=depth)

    def edges_among(self, nodes: Iterable[int]) -> Iterator[tuple[int, int]]:
        """The links between `nodes`, sorted."""
        chosen = set(nodes)
        for a in sorted(chosen):
            for b in self.outgoing[a]:
                if b in chosen:
                    yield a, b
