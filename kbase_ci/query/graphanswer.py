"""JSON answers for `kbase graph` (and the MCP server): every answer has `nodes`
(`{path, title, ...}`), `edges` (`{source, target}` links among those nodes, sorted),
its action's own fields, and `index`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kbase_ci.errors import UsageError
from kbase_ci.query.clusters import clusters
from kbase_ci.query.graph import NoteGraph
from kbase_ci.query.graphmap import explore_answer
from kbase_ci.query.view import QueryView

ACTIONS = ("path", "neighborhood", "hubs", "clusters", "orphans", "explore")


def note_graph(view: QueryView) -> NoteGraph:
    return NoteGraph(view.edges)


def graph_answer(view: QueryView, action: str, *, concise: bool = False,
                 **params: Any) -> dict[str, Any]:
    """`action` is one of ACTIONS; params are those of the matching `*_answer`.
    `concise`: nodes without titles, and no edges (a neighbourhood of 200 notes has
    thousands)."""
    if action not in ACTIONS:
        raise UsageError(f"unknown graph action {action}; use one of {', '.join(ACTIONS)}")
    answers: dict[str, Callable[..., dict[str, Any]]] = {
        "path": path_answer, "neighborhood": neighborhood_answer, "hubs": hubs_answer,
        "clusters": clusters_answer, "orphans": orphans_answer, "explore": explore_answer}
    answer = answers[action](view, **params)
    if concise and isinstance(answer.get("nodes"), list):
        answer.pop("edges", None)
        answer["nodes"] = [{k: v for k, v in n.items() if k != "title"}
                           for n in answer["nodes"]]
    return answer


def _node(view: QueryView, graph: NoteGraph, node: int, **extra: Any) -> dict[str, Any]:
    path = graph.paths[node]
    return {"path": path, "title": view.notes[path].title, **extra}


def _edges(graph: NoteGraph, pairs: Iterable[tuple[int, int]]) -> list[dict[str, str]]:
    return [{"source": graph.paths[a], "target": graph.paths[b]} for a, b in sorted(pairs)]


def _finish(view: QueryView, action: str, answer: dict[str, Any]) -> dict[str, Any]:
    return {"action": action, **answer, "index": view.index_info()}


def _count(name: str, value: int, least: int) -> int:
    if value < least:
        raise UsageError(f"{name} must be at least {least}, not {value}")
    return value


def path_answer(view: QueryView, source: str, target: str, *, directed: bool = False,
                all_paths: bool = False, limit: int = 20) -> dict[str, Any]:
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
    return _finish(view, "path", {
        "from": a_path, "to": b_path, "directed": directed, "length": found.length,
        "paths": [[graph.paths[n] for n in p] for p in found.paths],
        "truncated": found.truncated,
        "nodes": [_node(view, graph, n) for n in on_path], "edges": _edges(graph, links)})


def neighborhood_answer(view: QueryView, note: str, *, depth: int = 1,
                        directed: bool = False, limit: int = 200) -> dict[str, Any]:
    """Notes within `depth` hops, nearest first (ties by path), at most `limit`."""
    path = view.lookup(note)
    graph = note_graph(view)
    dist = graph.neighbourhood(graph.node[path], _count("--depth", depth, 0),
                               directed=directed)
    ranked = sorted(dist, key=lambda n: (dist[n], n))
    kept = ranked[:_count("--limit", limit, 1)]
    return _finish(view, "neighborhood", {
        "note": path, "depth": depth, "directed": directed,
        "truncated": len(kept) < len(ranked), "found": len(ranked) - 1,
        "nodes": [_node(view, graph, n, depth=dist[n]) for n in kept],
        "edges": _edges(graph, graph.edges_among(kept))})


def hubs_answer(view: QueryView, *, min_links: int = 3, limit: int = 20) -> dict[str, Any]:
    """The best-linked notes; `limit` 0 lists every one with at least `min_links`."""
    graph = note_graph(view)
    hubs = graph.hubs(_count("--min-links", min_links, 0))
    kept = hubs[:limit] if _count("--limit", limit, 0) else hubs
    return _finish(view, "hubs", {
        "min_links": min_links, "total": len(hubs),
        "nodes": [_node(view, graph, d.node, incoming=d.incoming, outgoing=d.outgoing,
                        degree=d.total) for d in kept],
        "edges": _edges(graph, graph.edges_among(d.node for d in kept))})


def orphans_answer(view: QueryView, *, no_backlinks: bool = False) -> dict[str, Any]:
    """Isolated notes, or with `no_backlinks` every note nobody links to."""
    graph = note_graph(view)
    found = graph.orphans(no_backlinks=no_backlinks)
    return _finish(view, "orphans", {
        "no_backlinks": no_backlinks,
        "nodes": [{"path": o.path, "title": view.notes[o.path].title,
                   "isolated": o.isolated, "outgoing": o.outgoing} for o in found],
        "edges": []})


def clusters_answer(view: QueryView, *, min_size: int = 3, limit: int = 20,
                    terms: int = 5) -> dict[str, Any]:
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
    records: list[dict[str, Any]] = []
    nodes: list[dict[str, Any]] = []
    chosen: list[int] = []
    for number, c in enumerate(found, 1):
        records.append({"id": number, "size": len(c.members),
                        "central": graph.paths[c.central], "terms": list(c.terms),
                        "members": [graph.paths[n] for n in c.members]})
        nodes.extend(_node(view, graph, n, cluster=number) for n in c.members)
        chosen.extend(c.members)
    order = {p: i for i, p in enumerate(graph.paths)}
    nodes.sort(key=lambda r: order[r["path"]])
    return _finish(view, "clusters", {
        "min_size": min_size, "total": total, "clusters": records, "nodes": nodes,
        "edges": _edges(graph, graph.edges_among(chosen))})
