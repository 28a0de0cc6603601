"""Communities of notes: Louvain modularity optimisation, deterministic, with a central
note and a few distinctive title and heading words per community.

Links count once per pair of notes whichever way they point (a note and the one it
links back to are no closer than a one-way link). Nodes are visited in path order and
a tie between communities goes to the lower-numbered one, so the same notes and links
always give the same clusters; no random seed is involved.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kbase_ci.query.graph import NoteGraph

_GAIN = 1e-9
_MAX_LEVELS = 20
_MAX_PASSES = 50


@dataclass(frozen=True, slots=True)
class Cluster:
    members: tuple[int, ...]
    """Node numbers, sorted (so in path order)."""
    central: int
    """The member linked with the most other members (ties: most links, then path)."""
    terms: tuple[str, ...]


def louvain(n: int, pairs: Iterable[tuple[int, int]]) -> list[int]:
    """A community number per node (communities numbered by their lowest node)."""
    weights: dict[tuple[int, int], float] = {}
    for a, b in pairs:
        if a != b:
            key = (a, b) if a < b else (b, a)
            weights[key] = 1.0
    member = list(range(n))  # original node -> current super-node
    size = n
    for _ in range(_MAX_LEVELS):
        adj: list[dict[int, float]] = [{} for _ in range(size)]
        loops = [0.0] * size
        for (a, b), w in weights.items():
            if a == b:
                loops[a] += w
            else:
                adj[a][b] = adj[a].get(b, 0.0) + w
                adj[b][a] = adj[b].get(a, 0.0) + w
        com, moved = _one_level(adj, loops)
        if not moved:
            break
        renumber: dict[int, int] = {}
        for c in com:
            renumber.setdefault(c, len(renumber))
        member = [renumber[com[m]] for m in member]
        merged: dict[tuple[int, int], float] = {}
        for (a, b), w in weights.items():
            ca, cb = renumber[com[a]], renumber[com[b]]
            key = (ca, cb) if ca <= cb else (cb, ca)
            merged[key] = merged.get(key, 0.0) + w
        weights, size = merged, len(renumber)
    first: dict[int, int] = {}
    for node, c in enumerate(member):
        first.setdefault(c, node)
    return [first[c] for c in member]


def _one_level(adj: list[dict[int, float]], loops: list[float]) -> tuple[list[int], bool]:
    """Move each node to the neighbouring community that raises modularity most, until
    no move helps. Returns the community per node and whether anything moved."""
    k = [sum(a.values()) + 2 * loops[i] for i, a in enumerate(adj)]
    m2 = sum(k)
    com = list(range(len(adj)))
    if m2 == 0:
        return com, False
    tot = list(k)
    moved_any = False
    for _ in range(_MAX_PASSES):
        moved = False
        for i in range(len(adj)):
            ci = com[i]
            links: dict[int, float] = {}
            for j in sorted(adj[i]):
                links[com[j]] = links.get(com[j], 0.0) + adj[i][j]
            tot[ci] -= k[i]
            best, best_gain = ci, links.get(ci, 0.0) - tot[ci] * k[i] / m2
            for c in sorted(links):
                gain = links[c] - tot[c] * k[i] / m2
                if gain > best_gain + _GAIN:
                    best, best_gain = c, gain
            tot[best] += k[i]
            if best != ci:
                com[i] = best
                moved = moved_any = True
        if not moved:
            break
    return com, moved_any


_WORD = re.compile(r"[^\W\d_][^\W_]{2,}")
_STOP = frozenset((
    "the", "and", "for", "with", "from", "into", "about", "over", "under", "that", "this",
    "these", "those", "what", "when", "where", "which", "who", "how", "why", "are", "was",
    "were", "has", "have", "had", "not", "but", "all", "any", "can", "our", "your",
    "their", "its", "notes", "note", "use", "using", "used", "via", "per", "vs"))


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP}


def clusters(graph: NoteGraph, texts: Mapping[int, str] | Sequence[str], *,
             min_size: int = 3, terms: int = 5) -> list[Cluster]:
    """Communities of at least `min_size` notes, biggest first (ties: central note's
    path). `texts[node]` is the text its terms come from (titles and headings): a term
    scores by how many members use it times how rare it is in the whole vault."""
    n = len(graph.paths)
    com = louvain(n, graph.pairs)
    groups: dict[int, list[int]] = {}
    for node, c in enumerate(com):
        groups.setdefault(c, []).append(node)
    bags = [words(texts[i]) for i in range(n)]
    df: dict[str, int] = {}
    for bag in bags:
        for w in bag:
            df[w] = df.get(w, 0) + 1
    out: list[Cluster] = []
    for members in groups.values():
        if len(members) < min_size:
            continue
        out.append(Cluster(tuple(members), _central(graph, members),
                           _terms(members, bags, df, n, terms)))
    return sorted(out, key=lambda c: (-len(c.members), c.central))


def _central(graph: NoteGraph, members: list[int]) -> int:
    return ranked(graph, members)[0]


def ranked(graph: NoteGraph, members: Sequence[int]) -> list[int]:
    """A cluster's members most central first: linked with the most other members, then
    most links, then path (the first is `Cluster.central`). An answer lists them so: a
    token budget cuts a list from its end (kbase_ci.query.payload)."""
    inside = set(members)

    def rank(node: int) -> tuple[int, int, int]:
        within = sum(1 for v in graph.neighbours[node] if v in inside)
        return (-within, -graph.degree(node).total, node)

    return sorted(members, key=rank)


def _terms(members: list[int], bags: list[set[str]], df: dict[str, int], n: int,
           limit: int) -> tuple[str, ...]:
    cf: dict[str, int] = {}
    for node in members:
        for w in bags[node]:
            cf[w] = cf.get(w, 0) + 1
    scored = [(-(c * math.log((n + 1) / df[w])), w) for w, c in cf.items()]
    return tuple(w for _, w in sorted(scored)[:limit])
