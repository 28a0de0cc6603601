"""`graph ACTION`: shortest paths, neighbourhoods, hubs, clusters, maps and orphans of the
link graph, as JSON, text, or a Mermaid/DOT picture. One tool for agents (`action` is a
parameter), a subcommand per action on the command line, each taking only its own
options with its own defaults."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import TYPE_CHECKING, Annotated, Any

from kbase_ci.errors import UsageError
from kbase_ci.query.choices import GRAPH_ACTIONS
from kbase_ci.query.tools.spec import (
    MAX_DEPTH,
    MAX_LIMIT,
    Param,
    Query,
    Session,
    Timeout,
    fields_of,
    refuse_unused,
)
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.graphanswer import GraphAnswer, PathAnswer
    from kbase_ci.query.graphmap import ExploreMap, ExploreSummary

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
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.graphanswer import graph_answer
    from kbase_ci.query.trace import Deadline

    extra = {"deadline": Deadline(p.timeout)} if p.action == "explore" else {}
    return graph_answer(s.view(), p.action, concise=p.concise, **_args(p), **extra)


def _events(s: Session, p: GraphParams) -> Iterator[tuple[str, Record]]:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.graphmap import WalkNode, explore_events
    from kbase_ci.query.trace import Deadline

    deadline = Deadline(p.timeout)
    args = {k: v for k, v in _args(p).items() if k != "note"}
    assert p.note is not None  # `_prepare` made sure
    for event in explore_events(s.view(), p.note, deadline=deadline, **args):
        yield ("node" if isinstance(event, WalkNode) else "result"), event


def _found(a: GraphAnswer) -> bool:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.graphanswer import ClustersAnswer, NeighborhoodAnswer, PathAnswer
    from kbase_ci.query.graphmap import ExploreMap, ExploreSummary

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
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.graphdraw import dot, mermaid

    return mermaid(a) if form == "mermaid" else dot(a)  # type: ignore[arg-type]


def _arrow(a: PathAnswer, x: str, y: str) -> str:
    if a.edges is None:  # --concise
        return "-"
    links = {(e.source, e.target) for e in a.edges}
    there, back = (x, y) in links, (y, x) in links
    return "<->" if there and back else "->" if there else "<-"


def _lines(a: GraphAnswer) -> list[str]:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query import graphanswer as ga
    from kbase_ci.query import graphmap as gm

    if isinstance(a, gm.ExploreMap | gm.ExploreSummary):
        return _map_lines(a)
    if isinstance(a, ga.PathAnswer):
        if not a.paths:
            return [f"no link path from {a.source} to {a.to}"]
        out = [f"{a.length} hop(s) from {a.source} to {a.to}"]
        out += ["  " + p[0] + "".join(f" {_arrow(a, x, y)} {y}" for x, y in pairwise(p))
                for p in a.paths]
        return out + (["  (more shortest paths; raise --limit)"] if a.truncated else [])
    if isinstance(a, ga.NeighborhoodAnswer):
        out = [f"{n.depth}  {n.path}" for n in a.nodes]
        return out + (["(truncated; raise --limit)"] if a.truncated else [])
    if isinstance(a, ga.HubsAnswer):
        return [f"{n.degree:>5}  in {n.incoming:<4} out {n.outgoing:<4} {n.path}"
                for n in a.nodes] or [f"no note has {a.min_links} or more links"]
    if isinstance(a, ga.ClustersAnswer):
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
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.graphmap import ExploreSummary

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
