"""Answers for `kbase graph` (and the MCP server): every answer has `nodes` (`{path,
title, ...}`), `edges` (`{source, target}` links among those nodes, sorted), its
action's own fields, and `index`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kbase_ci.errors import UsageError
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.choices import GRAPH_ACTIONS
from kbase_ci.query.clusters import clusters, ranked
from kbase_ci.query.graph import ClusterRecord, Edge, NoteGraph
from kbase_ci.query.graphmap import ExploreMap, ExploreSummary, explore_answer
from kbase_ci.query.traversalinfo import LinkTraversal, Metadata, graph_walk, hops
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field


class Node(Record):
    path: str
    title: str | None = json_field(omit=True)
    """None (and left out) in a concise answer."""


class DepthNode(Node):
    depth: int


class HubNode(Node):
    incoming: int
    outgoing: int
    degree: int


class OrphanNode(Node):
    isolated: bool
    outgoing: int


class ClusterNode(Node):
    cluster: int


class PathAnswer(Record):
    action: str = json_field(keep=True)
    source: str = json_field(key="from")
    to: str
    directed: bool
    length: int | None
    paths: list[list[str]]
    truncated: bool = json_field(keep=True)
    nodes: list[Node]
    edges: list[Edge] | None = json_field(omit=True)
    link_traversal: LinkTraversal = json_field(keep=True)
    metadata: Metadata = json_field(keep=True)
    index: IndexInfo


class NeighborhoodAnswer(Record):
    action: str = json_field(keep=True)
    note: str = json_field(keep=True)
    depth: int
    directed: bool
    truncated: bool = json_field(keep=True)
    found: int
    nodes: list[DepthNode]
    edges: list[Edge] | None = json_field(omit=True)
    link_traversal: LinkTraversal = json_field(keep=True)
    metadata: Metadata = json_field(keep=True)
    index: IndexInfo


class HubsAnswer(Record):
    action: str = json_field(keep=True)
    min_links: int
    total: int
    nodes: list[HubNode]
    edges: list[Edge] | None = json_field(omit=True)
    index: IndexInfo


class OrphansAnswer(Record):
    action: str = json_field(keep=True)
    no_backlinks: bool
    nodes: list[OrphanNode]
    edges: list[Edge] | None = json_field(omit=True)
    index: IndexInfo


class ClustersAnswer(Record):
    action: str = json_field(keep=True)
    min_size: int
    total: int
    clusters: list[ClusterRecord]
    nodes: list[ClusterNode]
    edges: list[Edge] | None = json_field(omit=True)
    index: IndexInfo


GraphAnswer = (PathAnswer | NeighborhoodAnswer | HubsAnswer | OrphansAnswer | ClustersAnswer
               | ExploreMap | ExploreSummary)


def note_graph(view: QueryView) -> NoteGraph:
    return NoteGraph(view.edges)


def graph_answer(view: QueryView, action: str, *, concise: bool = False,
                 **params: Any) -> GraphAnswer:
    """`action` is one of GRAPH_ACTIONS; params are those of the matching `*_answer`.
    `concise`: nodes without titles, and no edges (a neighbourhood of 200 notes has
    thousands)."""
    if action not in GRAPH_ACTIONS:
        raise UsageError(f"unknown graph action {action}; use one of "
                         f"{', '.join(GRAPH_ACTIONS)}")
    answers: dict[str, Callable[..., GraphAnswer]] = {
        "path": path_answer, "neighborhood": neighborhood_answer, "hubs": hubs_answer,
        "clusters": clusters_answer, "orphans": orphans_answer, "explore": explore_answer}
    answer = answers[action](view, **params)
    if concise and not isinstance(answer, ExploreSummary) and answer.nodes is not None:
        nodes = [n._replace(title=None) for n in answer.nodes]
        return answer._replace(nodes=nodes, edges=None)
    return answer


def _node(view: QueryView, graph: NoteGraph, node: int) -> Node:
    path = graph.paths[node]
    return Node(path, view.notes[path].title)


def _edges(graph: NoteGraph, pairs: Iterable[tuple[int, int]]) -> list[Edge]:
    return [Edge(graph.paths[a], graph.paths[b]) for a, b in sorted(pairs)]


def _count(name: str, value: int, least: int) -> int:
    if value < least:
        raise UsageError(f"{name} must be at least {least}, not {value}")
    return value


def path_answer(view: QueryView, source: str, target: str, *, directed: bool = False,
                all_paths: bool = False, limit: int = 20) -> PathAnswer:
    """Shortest link path(s) between two notes (names resolved with `view.lookup`)."""
    a_path, b_path = view.lookup(source), view.lookup(target)
    graph = note_graph(view)
    a, b = graph.node[a_path], graph.node[b_path]
    found = graph.shortest_paths(a, b, directed=directed,
                                 limit=_count("--limit", limit, 1) if all_paths else 1)
    on_path = sorted({n for p in found.paths for n in p})
    steps = {(p[i], p[i + 1]) for p in found.paths for i in range(len(p) - 1)}
    links = {(u, v) for u, v in steps if v in graph.outgoing[u]}
    if not directed:
        links |= {(v, u) for u, v in steps if u in graph.outgoing[v]}
    # The search walks back from the target over every note that reaches it.
    walk, meta = graph_walk(found.searched, graph.adjacency(directed, reverse=True),
                            expanded=found.searched,
                            strategy="shortest paths",
                            depth="all hops", shown=max(0, len(on_path) - 1),
                            limitations=["more shortest paths than limit: all_paths, limit"]
                            if found.truncated else [])
    meta = meta._replace(primary_documents=2 if a != b else 1,
                         linked_documents=max(0, len(on_path) - 2))
    return PathAnswer("path", a_path, b_path, directed, found.length,
                      [[graph.paths[n] for n in p] for p in found.paths], found.truncated,
                      [_node(view, graph, n) for n in on_path], _edges(graph, links),
                      walk, meta, view.index_info())


def neighborhood_answer(view: QueryView, note: str, *, depth: int = 1,
                        directed: bool = False, limit: int = 200) -> NeighborhoodAnswer:
    """Notes within `depth` hops, nearest first (ties by path), at most `limit`."""
    path = view.lookup(note)
    graph = note_graph(view)
    dist = graph.neighbourhood(graph.node[path], _count("--depth", depth, 0),
                               directed=directed)
    ranked = sorted(dist, key=lambda n: (dist[n], n))
    kept = ranked[:_count("--limit", limit, 1)]
    walk, meta = graph_walk(
        dist, graph.adjacency(directed), expanded=[n for n in dist if dist[n] < depth],
        strategy="breadth-first" + (", links out" if directed else ""),
        depth=hops(depth), shown=len(kept) - 1,
        limitations=[f"{len(ranked) - len(kept)} notes reached past limit: not listed"]
        if len(kept) < len(ranked) else [])
    return NeighborhoodAnswer(
        "neighborhood", path, depth, directed, len(kept) < len(ranked), len(ranked) - 1,
        [DepthNode(graph.paths[n], view.notes[graph.paths[n]].title, dist[n]) for n in kept],
        _edges(graph, graph.edges_among(kept)), walk, meta, view.index_info())


def hubs_answer(view: QueryView, *, min_links: int = 3, limit: int = 20) -> HubsAnswer:
    """The best-linked notes; `limit` 0 lists every one with at least `min_links`."""
    graph = note_graph(view)
    hubs = graph.hubs(_count("--min-links", min_links, 0))
    kept = hubs[:limit] if _count("--limit", limit, 0) else hubs
    return HubsAnswer(
        "hubs", min_links, len(hubs),
        [HubNode(graph.paths[d.node], view.notes[graph.paths[d.node]].title, d.incoming,
                 d.outgoing, d.total) for d in kept],
        _edges(graph, graph.edges_among(d.node for d in kept)), view.index_info())


def orphans_answer(view: QueryView, *, no_backlinks: bool = False) -> OrphansAnswer:
    """Isolated notes, or with `no_backlinks` every note nobody links to."""
    graph = note_graph(view)
    found = graph.orphans(no_backlinks=no_backlinks)
    return OrphansAnswer("orphans", no_backlinks,
                         [OrphanNode(o.path, view.notes[o.path].title, o.isolated, o.outgoing)
                          for o in found], [], view.index_info())


def clusters_answer(view: QueryView, *, min_size: int = 3, limit: int = 20,
                    terms: int = 5) -> ClustersAnswer:
    """Communities of linked notes, biggest first; `limit` 0 lists them all."""

    graph = note_graph(view)
    texts = []
    for p in graph.paths:
        info = view.notes[p]
        texts.append(" ".join((info.title, *(h[1] for h in info.headings))))
    found = clusters(graph, texts, min_size=_count("--min-size", min_size, 1),
                     terms=terms)
    total = len(found)
    if _count("--limit", limit, 0):
        found = found[:limit]
    records: list[ClusterRecord] = []
    nodes: list[ClusterNode] = []
    chosen: list[int] = []
    for number, c in enumerate(found, 1):
        records.append(ClusterRecord(number, len(c.members), graph.paths[c.central],
                                     list(c.terms),
                                     [graph.paths[n] for n in ranked(graph, c.members)]))
        nodes.extend(ClusterNode(graph.paths[n], view.notes[graph.paths[n]].title, number)
                     for n in c.members)
        chosen.extend(c.members)
    order = {p: i for i, p in enumerate(graph.paths)}
    nodes.sort(key=lambda r: order[r.path])
    return ClustersAnswer("clusters", min_size, total, records, nodes,
                          _edges(graph, graph.edges_among(chosen)), view.index_info())
