"""`kbase graph explore NOTE`: a map of the notes around one note, for an agent deciding
where to go: who is near (a walk over links either way, nearest first), how they group
(clusters), which of them are hubs, and in what order to read them (the reading order
of `query.readingorder`: foundations first).

The walk is a generator of events, so `--stream` can print each note as it is reached
(JSON lines) and a `--timeout` can stop it with what it has: the answer then says
`partial: true` and why. `--summary` condenses the map to about 500 tokens: counts, the
first ring of neighbours, a few clusters and hubs, and the reading path.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from typing import Any

from kbase_ci.errors import UsageError
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.clusters import clusters, ranked
from kbase_ci.query.graph import ClusterRecord, Edge, NoteGraph
from kbase_ci.query.notetable import NoteEdges
from kbase_ci.query.readingorder import Relations, order_nodes, relations, walk_needs
from kbase_ci.query.trace import NO_DEADLINE, Deadline, Trace
from kbase_ci.query.traversalinfo import LinkTraversal, Metadata, graph_walk, hops
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field

SUMMARY_TOKENS = 500
"""What `--summary` aims at (tokens estimated as characters / 4, the index block aside)."""
HUBS = 5
PATH_STEPS = 12


class WalkNode(Record):
    """A note as the walk reaches it (`--stream` prints one line per note)."""

    path: str
    title: str | None = json_field(omit=True)
    depth: int
    via: str | None
    relation: str | None
    """How `via` links with it: outlink, backlink or mutual."""
    degree: int


class MapNode(WalkNode):
    cluster: int | None


class MapHub(Record):
    path: str
    title: str
    degree: int


class ExploreMap(Record):
    """The map; the stream's last line is this without `nodes`."""

    action: str = json_field(keep=True)
    note: str = json_field(keep=True)
    title: str
    depth: int
    limit: int
    found: int
    truncated: bool = json_field(keep=True)
    partial: bool
    partial_reason: str | None
    clusters: list[ClusterRecord]
    hubs: list[MapHub]
    reading_path: list[str]
    edges: list[Edge] | None = json_field(omit=True)
    nodes: list[MapNode] | None = json_field(omit=True)
    link_traversal: LinkTraversal = json_field(keep=True)
    metadata: Metadata = json_field(keep=True)
    index: IndexInfo


class SummaryCluster(Record):
    size: int
    central: str
    terms: list[str]


class SummaryHub(Record):
    path: str
    degree: int


class Omitted(Record):
    neighbours: int
    clusters: int
    reading_path: int


class ExploreSummary(Record):
    """The map in about `SUMMARY_TOKENS` tokens (`--summary`)."""

    action: str = json_field(keep=True)
    summary: bool
    note: str = json_field(keep=True)
    title: str
    depth: int
    notes: int
    partial: bool
    partial_reason: str | None
    truncated: bool = json_field(keep=True)
    neighbours: list[str]
    clusters: list[SummaryCluster]
    hubs: list[SummaryHub]
    reading_path: list[str]
    omitted: Omitted
    tokens: int
    link_traversal: LinkTraversal = json_field(keep=True)
    metadata: Metadata = json_field(keep=True)
    index: IndexInfo


Event = WalkNode | ExploreMap | ExploreSummary


def explore_events(view: QueryView, note: str, *, depth: int = 2, limit: int = 200,
                   summary: bool = False, deadline: Deadline = NO_DEADLINE
                   ) -> Iterator[Event]:
    """A `WalkNode` for each note reached, in walk order (the note itself first), then
    the answer without its `nodes`."""
    if depth < 0 or limit < 1:
        raise UsageError("--depth must be at least 0 and --limit at least 1")
    trace = Trace("explore")
    path = view.lookup(note)
    rel = relations(view)
    graph = rel.graph
    start = graph.node[path]
    seen = {start: 0}
    order = [start]
    expanded: list[int] = []
    queue = deque([start])
    truncated = False
    partial = None
    yield _node(view, graph, start, 0, None)
    while queue:
        if deadline.expired():
            partial = deadline.reason(f"{len(order)} notes reached")
            trace("stop", reason="timeout", reached=len(order))
            break
        u = queue.popleft()
        if seen[u] >= depth:
            continue
        expanded.append(u)
        for v in graph.neighbours[u]:
            if v in seen:
                continue
            if len(order) >= limit:
                truncated = True
                trace("stop", reason="limit", limit=limit)
                break
            seen[v] = seen[u] + 1
            order.append(v)
            queue.append(v)
            trace("visit", path=graph.paths[v], depth=seen[v], via=graph.paths[u])
            yield _node(view, graph, v, seen[v], u)
        if truncated:
            break
    yield _result(view, rel, path, order, seen, depth, limit, truncated, partial, summary,
                  deadline, trace, expanded)


def _node(view: QueryView, graph: NoteGraph, n: int, depth: int, via: int | None
          ) -> WalkNode:
    p = graph.paths[n]
    rel = None
    if via is not None:
        out, back = n in graph.outgoing[via], via in graph.outgoing[n]
        rel = "mutual" if out and back else "outlink" if out else "backlink"
    return WalkNode(p, view.notes[p].title, depth,
                    graph.paths[via] if via is not None else None, rel,
                    graph.degree(n).total)


def _result(view: QueryView, rel: Relations, path: str, order: list[int],
            seen: dict[int, int], depth: int, limit: int, truncated: bool,
            partial: str | None, summary: bool, deadline: Deadline,
            trace: Trace, expanded: list[int]) -> ExploreMap | ExploreSummary:
    graph = rel.graph
    local = {n: i for i, n in enumerate(sorted(order))}
    sub_paths = tuple(graph.paths[n] for n in sorted(order))
    pairs = tuple(sorted((local[a], local[b]) for a, b in graph.edges_among(order)))
    sub = NoteGraph(NoteEdges(sub_paths, pairs))
    texts = [" ".join((view.notes[p].title, *(h[1] for h in view.notes[p].headings)))
             for p in sub_paths]
    groups = [] if deadline.expired() else clusters(sub, texts, min_size=2, terms=3)
    hubs = sorted(order, key=lambda n: (-graph.degree(n).total, n))[:HUBS]
    # Read what the note builds on (within the map), the note, then its first ring.
    start = order[0]
    needs, stopped = walk_needs(view, rel, start, depth, deadline, trace)
    first = order_nodes(rel, [n for n in needs if n in seen], deadline=deadline)
    ring = order_nodes(rel, [n for n in order if seen[n] == 1 and n not in needs],
                       deadline=deadline)
    reading_nodes = [*first.nodes, start, *ring.nodes]
    partial = partial or stopped or first.partial or ring.partial
    trace("map", notes=len(order), clusters=len(groups), reading_path=len(reading_nodes))
    limits = [f"{limit} notes at most (limit): more were within reach"] if truncated else []
    if partial is not None:
        limits.append(f"partial: {partial}")
    walk, meta = graph_walk(seen, graph.neighbours, expanded=expanded,
                            strategy="breadth-first", depth=hops(depth),
                            shown=len(order) - 1, limitations=limits)
    answer = ExploreMap(
        "explore", path, view.notes[path].title, depth, limit, len(order) - 1, truncated,
        partial is not None, partial,
        [ClusterRecord(i, len(c.members), sub_paths[c.central], list(c.terms),
                       [sub_paths[m] for m in ranked(sub, c.members)])
         for i, c in enumerate(groups, 1)],
        [MapHub(graph.paths[n], view.notes[graph.paths[n]].title, graph.degree(n).total)
         for n in hubs],
        [graph.paths[n] for n in reading_nodes],
        [Edge(sub_paths[a], sub_paths[b]) for a, b in pairs], None, walk, meta,
        view.index_info())
    if summary:
        return _condensed(answer, [graph.paths[n] for n in order if seen[n] == 1])
    return answer


def _condensed(full: ExploreMap, ring: list[str]) -> ExploreSummary:
    """The map in about SUMMARY_TOKENS tokens: lists are cut, longest first, until the
    estimate fits; `omitted` says how much was left out."""
    out: dict[str, Any] = {  # measured as the answer's JSON, so built as it
        "action": "explore", "summary": True, "note": full.note, "title": full.title,
        "depth": full.depth, "notes": full.found + 1,
        "partial": full.partial, "partial_reason": full.partial_reason,
        "truncated": full.truncated, "neighbours": ring,
        "clusters": [{"size": c.size, "central": c.central, "terms": c.terms}
                     for c in full.clusters],
        "hubs": [{"path": h.path, "degree": h.degree} for h in full.hubs],
        "reading_path": full.reading_path[:PATH_STEPS],
        "omitted": {"neighbours": 0, "clusters": 0, "reading_path": max(
            0, len(full.reading_path) - PATH_STEPS)},
    }
    while _tokens(out) > SUMMARY_TOKENS:
        name = max(("neighbours", "clusters", "reading_path", "hubs"),
                   key=lambda k: len(json.dumps(out[k])))
        if not out[name]:
            break
        out[name] = out[name][:-1]
        if name in out["omitted"]:
            out["omitted"][name] += 1
    omitted = out["omitted"]
    gone = [f"{n} {name.replace('_', ' ')}" for name, n in omitted.items() if n]
    meta = full.metadata._replace(
        linked_documents=len({*out["neighbours"], *(h["path"] for h in out["hubs"]),
                              *(c["central"] for c in out["clusters"]),
                              *out["reading_path"]} - {full.note}),
        limitations=[*full.metadata.limitations,
                     *([f"summary: {', '.join(gone)}: omitted"] if gone else [])])
    return ExploreSummary(
        "explore", True, full.note, full.title, full.depth, full.found + 1, full.partial,
        full.partial_reason, full.truncated, out["neighbours"],
        [SummaryCluster(c["size"], c["central"], c["terms"]) for c in out["clusters"]],
        [SummaryHub(h["path"], h["degree"]) for h in out["hubs"]], out["reading_path"],
        Omitted(omitted["neighbours"], omitted["clusters"], omitted["reading_path"]),
        _tokens(out), full.link_traversal, meta, full.index)


def _tokens(answer: dict[str, Any]) -> int:
    return -(-len(json.dumps(answer, ensure_ascii=False, separators=(",", ":"))) // 4)


def explore_answer(view: QueryView, note: str, **params: Any) -> ExploreMap | ExploreSummary:
    """The whole map as one answer (nodes in walk order)."""
    nodes: list[WalkNode] = []
    for event in explore_events(view, note, **params):
        if isinstance(event, WalkNode):
            nodes.append(event)
        elif isinstance(event, ExploreSummary):
            return event
        else:
            cluster_of = {m: c.id for c in event.clusters for m in c.members}
            return event._replace(nodes=[
                MapNode(n.path, n.title, n.depth, n.via, n.relation, n.degree,
                        cluster_of.get(n.path)) for n in nodes])
    raise AssertionError("the walk ends with its result")
