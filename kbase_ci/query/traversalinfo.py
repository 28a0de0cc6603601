"""What every answer that walks the link graph says about its walk (`context`, `explore`,
`graph explore`, `graph neighborhood`, `graph path`), in the knowledge-bank schema's
words: `link_traversal` (how many links the walk found around the notes it expanded,
how many steps it took along them, how deep it got, how, and how many notes each hop
reached) and `metadata` (how many notes it weighed, how many of those the answer shows
as where it started and as linked notes, how deep it was asked to go, and what it left
out). Compact on purpose: counts, never lists of paths (the answer lists its notes
already), so both cost about 100 tokens (docs/context.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kbase_ci.typedjson import Record


class LinkTraversal(Record):
    total_links_found: int
    """Distinct links (either way) touching the notes the walk expanded."""
    links_followed: int
    """Steps the walk took along them from the notes it expanded (a step to a note
    already reached counts too), and along shared tags (`context --follow-tags`)."""
    max_depth_reached: int
    """Hops from the start to the farthest note reached."""
    traversal_strategy: str
    traversal_path: list[int]
    """Notes reached at each hop: the start (hop 0), then one hop away, ..."""


class Metadata(Record):
    documents_analyzed: int
    """Notes the walk reached (and weighed), the start included."""
    primary_documents: int
    """Notes of the answer where the walk started (the note asked for, search hits)."""
    linked_documents: int
    """The other notes of the answer: reached through links."""
    analysis_depth: str
    """The depth asked for: a `context` preset (`quick`, `standard`, `deep`) or hops."""
    limitations: list[str]
    """What the walk or the budget left out, each with where the answer says more
    (`left_out`, `omitted`, `truncated`); empty when nothing was."""


def per_hop(depths: Iterable[int]) -> list[int]:
    """Notes reached at each hop, from the depth of every note reached."""
    counts: list[int] = []
    for d in depths:
        while len(counts) <= d:
            counts.append(0)
        counts[d] += 1
    return counts


def walked(dist: Mapping[int, int], adjacency: Sequence[Sequence[int]],
           expanded: Iterable[int]) -> tuple[int, int]:
    """(links found, links followed) of a breadth-first walk that reached `dist` and took
    every link of `adjacency` out of the notes `expanded`."""
    found: set[tuple[int, int]] = set()
    followed = 0
    for u in expanded:
        for v in adjacency[u]:
            found.add((u, v) if u < v else (v, u))
            followed += 1
    return len(found), followed


def hops(n: int) -> str:
    return f"{n} hop" if n == 1 else f"{n} hops"


def graph_walk(dist: Mapping[int, int], adjacency: Sequence[Sequence[int]], *,
               expanded: Iterable[int], strategy: str, depth: str, shown: int,
               limitations: list[str]) -> tuple[LinkTraversal, Metadata]:
    """The records of a walk from one note over `adjacency` that reached `dist` (note ->
    hops) and expanded `expanded`, whose answer shows `shown` notes besides the start."""
    found, followed = walked(dist, adjacency, expanded)
    return (LinkTraversal(found, followed, max(dist.values(), default=0), strategy,
                          per_hop(dist.values())),
            Metadata(len(dist), 1, shown, depth, limitations))
