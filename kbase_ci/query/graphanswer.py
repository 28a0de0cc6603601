"""Answers for `kbase graph` (and the MCP server): every answer has `nodes` (`{path,
title, ...}`), `edges` (`{source, target}` links among those nodes, sorted), its
action's own fields, and `index`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import pairwise
from typing import Annotated, Any

from kbase_ci.errors import UsageError
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.choices import GRAPH_ACTIONS
from kbase_ci.query.clusters import clusters, ranked
from kbase_ci.query.graph import ClusterRecord, Edge, NoteGraph
from kbase_ci.query.graphdraw import dot, mermaid
from kbase_ci.query.graphmap import (
    ExploreMap,
    ExploreSummary,
    WalkNode,
    explore_answer,
    explore_events,
)
from kbase_ci.query.spec import (
    MAX_DEPTH,
    MAX_LIMIT,
    Param,
    Query,
    Session,
    Timeout,
    fields_of,
    refuse_unused,
)
from kbase_ci.query.trace import Deadline
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


PICTURES = {"mermaid": "%% ", "dot": "// "}
"""The picture formats, and how a comment line starts in each."""


class GraphParams(Record):
    action: Annotated[str, Param(
        choices=GRAPH_ACTIONS, tool="",
        helps={"path": "shortest link path between two notes",
               "neighborhood": "notes within N links of a note",
               "hubs": "best-linked notes (links in + out)",
               "clusters": "communities of linked notes",
               "explore": "a map around a note: neighbours, clusters, hubs and a reading "
                          "path (--summary: ~500 tokens)",
               "orphans": "notes with no links in or out"})]
    note: Annotated[str | None, Param(positional=True, metavar="NOTE",
                                      actions=("neighborhood", "explore"),
                                      tool="")] = None
    source: Annotated[str | None, Param(positional=True, metavar="A", actions=("path",),
                                        tool="")] = None
    target: Annotated[str | None, Param(positional=True, metavar="B", actions=("path",),
                                        tool="")] = None
    depth: Annotated[int | None, Param(
        ge=0, le=MAX_DEPTH,
        actions=("neighborhood", "explore"), by_action={"neighborhood": 1, "explore": 2},
        help="hops (default: %(default)s)", tool="explore (2), neighborhood (1): hops.")
    ] = None
    limit: Annotated[int | None, Param(
        ge=0, le=MAX_LIMIT, actions=("path", "neighborhood", "hubs", "clusters", "explore"),
        by_action={"path": 20, "neighborhood": 200, "hubs": 20, "clusters": 20,
                   "explore": 200},
        helps={"path": "paths with --all (default: 20)",
               "neighborhood": "most notes shown (default: 200)",
               "hubs": "most notes, 0 = all (default: 20)",
               "clusters": "most clusters, 0 = all (default: 20)",
               "explore": "most notes (default: 200)"},
        tool="")] = None
    directed: Annotated[bool, Param(
        actions=("path", "neighborhood"),
        helps={"path": "follow links only from the note holding them (default: either way)",
               "neighborhood": "follow outgoing links only"},
        tool="path, neighborhood: links one way only.")] = False
    all_paths: Annotated[bool, Param(flag="--all", actions=("path",),
                                     help="every shortest path, up to --limit",
                                     tool="path: every shortest path.")] = False
    min_links: Annotated[int | None, Param(
        ge=0, le=MAX_LIMIT, actions=("hubs",), by_action={"hubs": 3},
        help="least links (default: 3)",
        tool="hubs: least links (3).")] = None
    min_size: Annotated[int | None, Param(
        ge=1, le=MAX_LIMIT, actions=("clusters",), by_action={"clusters": 3},
        help="least notes (default: 3)",
        tool="clusters: least notes (3).")] = None
    no_backlinks: Annotated[bool, Param(
        actions=("orphans",), help="every note nobody links to (it may link out)",
        tool="orphans: every note nobody links to.")] = False
    summary: Annotated[bool, Param(
        actions=("explore",),
        help="a condensed map of about 500 tokens: counts, first ring, clusters, hubs, "
             "reading path", tool="explore: the ~500-token map.")] = False
    stream: Annotated[bool, Param(
        actions=("explore",),
        help="JSON lines: one per note as it is reached, then the result")] = False
    concise: Annotated[bool, Param(help="paths and numbers only: no titles, no edges",
                                   tool="Paths and counts only.")] = False
    timeout: Annotated[Timeout, Param(actions=("explore",))] = None


def _prepare(p: GraphParams) -> GraphParams:
    """What the action takes, what it needs, and its defaults for what was left out."""
    # (the parameters a tool has: the CLI offers each action only its own options)
    fields = [f for f in fields_of(GraphParams) if f.name != "action" and f.param.tool is not None]
    needs = {"neighborhood": ("note",), "explore": ("note",), "path": ("source", "target")}
    refuse_unused(p.action, {f.name: getattr(p, f.name) for f in fields},
                  [f.name for f in fields if not f.param.actions or p.action in f.param.actions],
                  needs.get(p.action, ()))
    if p.action in ("neighborhood", "explore") and not (p.note or "").strip():
        raise UsageError(f"action {p.action} needs note: the note to start from",
                         parameter="note")
    if p.action == "path" and not ((p.source or "").strip() and (p.target or "").strip()):
        raise UsageError("action path needs source and target: the two notes to join",
                         parameter="target" if (p.source or "").strip() else "source")
    left = {f.name: f.param.by_action[p.action] for f in fields_of(GraphParams)
            if f.param.by_action and p.action in f.param.by_action
            and getattr(p, f.name) is None}
    return p._replace(**left)


def _form(p: GraphParams, form: str) -> None:
    """The CLI's output form for this call."""
    if (p.stream or p.summary) and form in PICTURES:
        raise UsageError("--stream and --summary print JSON or text, not a picture")
    if p.stream and form != "json":
        raise UsageError("--stream prints JSON lines; leave out --format text")


def _args(p: GraphParams) -> dict[str, Any]:
    """The parameters of the action's answer function (kbase_ci.query.graphanswer): the
    action's own, but how it runs (`stream`, `timeout`)."""
    return {f.name: getattr(p, f.name) for f in fields_of(GraphParams)
            if p.action in f.param.actions and f.name not in ("stream", "timeout")}


def _run(s: Session, p: GraphParams) -> GraphAnswer:
    extra = {"deadline": Deadline(p.timeout)} if p.action == "explore" else {}
    return graph_answer(s.view(), p.action, concise=p.concise, **_args(p), **extra)


def _events(s: Session, p: GraphParams) -> Iterator[tuple[str, Record]]:
    deadline = Deadline(p.timeout)
    args = {k: v for k, v in _args(p).items() if k != "note"}
    assert p.note is not None  # `_prepare` made sure
    for event in explore_events(s.view(), p.note, deadline=deadline, **args):
        yield ("node" if isinstance(event, WalkNode) else "result"), event


def _found(a: GraphAnswer) -> bool:
    if isinstance(a, PathAnswer):
        return bool(a.paths)
    if isinstance(a, ClustersAnswer):
        return bool(a.clusters)
    if isinstance(a, ExploreSummary):
        return a.notes > 1
    if isinstance(a, ExploreMap):
        return a.found > 0
    # a neighbourhood always holds its own note
    return len(a.nodes) > (1 if isinstance(a, NeighborhoodAnswer) else 0)


def _lists(p: GraphParams) -> tuple[str, ...]:
    """What each action's answer is for: the notes (a path's paths), a cluster's
    members before the notes listed again under `nodes` (`clusters.members`), a
    summary's first ring."""
    if p.action == "path":
        return ("paths", "nodes")
    if p.action == "clusters":
        return ("clusters", "clusters.terms", "clusters.members")
    if p.action == "explore" and p.summary:
        return ("neighbours", "reading_path", "hubs", "clusters")
    if p.action == "explore":
        return ("nodes", "reading_path", "hubs", "clusters")
    return ("nodes",)


def _draw(a: GraphAnswer, form: str) -> str:
    return mermaid(a) if form == "mermaid" else dot(a)  # type: ignore[arg-type]


def _arrow(a: PathAnswer, x: str, y: str) -> str:
    if a.edges is None:  # --concise
        return "-"
    links = {(e.source, e.target) for e in a.edges}
    there, back = (x, y) in links, (y, x) in links
    return "<->" if there and back else "->" if there else "<-"


def _lines(a: GraphAnswer) -> list[str]:
    if isinstance(a, ExploreMap | ExploreSummary):
        return _map_lines(a)
    if isinstance(a, PathAnswer):
        if not a.paths:
            return [f"no link path from {a.source} to {a.to}"]
        out = [f"{a.length} hop(s) from {a.source} to {a.to}"]
        out += ["  " + p[0] + "".join(f" {_arrow(a, x, y)} {y}" for x, y in pairwise(p))
                for p in a.paths]
        return out + (["  (more shortest paths; raise --limit)"] if a.truncated else [])
    if isinstance(a, NeighborhoodAnswer):
        out = [f"{n.depth}  {n.path}" for n in a.nodes]
        return out + (["(truncated; raise --limit)"] if a.truncated else [])
    if isinstance(a, HubsAnswer):
        return [f"{n.degree:>5}  in {n.incoming:<4} out {n.outgoing:<4} {n.path}"
                for n in a.nodes] or [f"no note has {a.min_links} or more links"]
    if isinstance(a, ClustersAnswer):
        out = []
        for c in a.clusters:
            out.append(f"cluster {c.id}: {c.size} notes, central {c.central}; "
                       f"terms: {', '.join(c.terms) or '-'}")
            out.extend(f"  {m}" for m in c.members)
        return out or [f"no cluster of {a.min_size} or more linked notes"]
    return [f"{n.path}  " + ("isolated" if n.isolated else f"links out to {n.outgoing} note(s)")
            for n in a.nodes] or ["no note without backlinks" if a.no_backlinks
                                  else "no isolated note (each links or is linked)"]


def _map_lines(a: ExploreMap | ExploreSummary) -> list[str]:
    """An explore map or its summary as text."""

    notes = a.notes if isinstance(a, ExploreSummary) else a.found + 1
    out = [f"{a.note}: {notes} notes within {a.depth} hops"
           + (f" (partial: {a.partial_reason})" if a.partial else "")]
    out += [f"  cluster of {c.size}, central {c.central}: {', '.join(c.terms)}"
            for c in a.clusters]
    out.append("  hubs: " + ", ".join(f"{h.path} ({h.degree})" for h in a.hubs))
    out.append("  read in this order: " + " -> ".join(a.reading_path))
    return out

QUERIES = [Query(
    "graph", ("graph",),
    help="paths, neighbourhoods, hubs, clusters and orphans of the link graph",
    description="Questions about the whole link graph (links between notes, from the index "
                "with the work tree's changes overlaid). Exit 0 results, 1 none (no path, no "
                "orphans, ...), 2 bad arguments or no such note.",
    tool="Link graph: `explore` maps the notes around `note` (`summary`: ~500 tokens); `path` "
         "from `source` to `target`; `neighborhood` of `note`; `hubs`, `clusters`, `orphans`.",
    when="orienting: a ~500-token map of a neighbourhood (`explore`, `summary`), how two "
         "notes connect, hubs, clusters",
    params=GraphParams, run=_run, text=_lines, found=_found, lists=_lists, prepare=_prepare,
    formats=("json", "text", *PICTURES), actions="action",
    aliases={"neighborhood": ("neighbourhood",)}, draw=_draw, pictures=PICTURES,
    events=_events, check_form=_form)]
