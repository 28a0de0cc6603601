"""What to read first: `kbase prerequisites NOTE` and `kbase reading-order`, from links
and folder structure alone (no model).

Two signals, both visible in any vault:
- **Links, oriented by how widely a note is referenced.** When A links to B and B is
  linked from more notes than A (or as many, and B does not link back), B is the more
  basic of the two: the note everyone points at is the one to know first ("Data
  Warehouse" before "Kimball Method"). A link between two notes the other way round is a
  pointer to a detail, not a prerequisite.
- **Folder overviews.** A folder's index note (`README.md`, `index.md`, `_index.md`, or a
  note named like the folder, inside or beside it) introduces the notes in the folder.

`prerequisites` follows those relations backwards from one note, up to `depth` steps
(the prerequisites of its prerequisites), and lists them foundations first.
`reading_order` orders a set of notes so that each comes after the notes it builds on
(Kahn's algorithm; ties: most referenced first, then path). A cycle is cut at the note
with the fewest unmet prerequisites, and counted (`cycles_broken`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Annotated

from kbase_ci.errors import UsageError
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.graph import NoteGraph
from kbase_ci.query.spec import (
    MAX_DEPTH,
    MAX_LIMIT,
    Domain,
    Note,
    Param,
    Query,
    Session,
    Tags,
    Timeout,
    none_if_blank,
)
from kbase_ci.query.trace import NO_DEADLINE, Deadline, Trace
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field

OVERVIEW_NAMES = ("readme", "index", "_index")
EARLY_LINES = 0.25
"""A link in the first quarter of a note's links is part of what the note starts from."""


class Need(Record):
    """A note another builds on, `depth` steps back from the start, `via` the note
    needing it, and why."""

    path: str
    depth: int
    via: str
    backlinks: int
    why: list[str]


class Prerequisite(Need):
    title: str


class PrerequisitesAnswer(Record):
    note: str = json_field(keep=True)
    title: str
    depth: int
    count: int
    prerequisites: list[Prerequisite]
    truncated: bool = json_field(keep=True)
    partial: bool
    partial_reason: str | None
    index: IndexInfo


class Step(Record):
    step: int
    path: str
    title: str
    backlinks: int
    after: list[str]
    """What it builds on that the order puts before it."""


class ReadingOrderAnswer(Record):
    start: str | None
    tags: list[str] = json_field(keep=True)
    domain: str | None
    count: int
    order: list[Step]
    truncated: bool = json_field(keep=True)
    cycles_broken: int
    partial: bool
    partial_reason: str | None
    index: IndexInfo


@dataclass
class Relations:
    """Which note comes before which (state: built once per view and graph)."""

    graph: NoteGraph
    overview: dict[int, int] = field(default_factory=dict)
    """Note -> its folder's overview note."""

    def backlinks(self, n: int) -> int:
        return self.graph.degree(n).incoming

    def before(self, a: int, b: int) -> bool:
        """Whether `a` is to be read before `b`, given that b links to a."""
        ia, ib = self.backlinks(a), self.backlinks(b)
        return ia > ib or (ia == ib and b not in self.graph.outgoing[a])

    def needs(self, n: int) -> list[tuple[int, str]]:
        """The notes `n` builds on, each with why: its outlinks that come before it, and
        its folder's overview. An overview's links into its own folder introduce those
        notes; it does not build on them."""
        out = [(m, "linked from it, and referenced by more notes")
               for m in self.graph.outgoing[n]
               if m != n and self.before(m, n) and self.overview.get(m) != n]
        over = self.overview.get(n)
        if over is not None and over != n and all(m != over for m, _ in out):
            out.append((over, "the overview of its folder"))
        return out


def _overviews(paths: Sequence[str]) -> dict[int, int]:
    node = {p: i for i, p in enumerate(paths)}
    found: dict[str, int] = {}  # folder -> overview note
    for p, i in node.items():
        pp = PurePosixPath(p)
        folder = str(pp.parent)
        if pp.stem.casefold() in OVERVIEW_NAMES or pp.stem == pp.parent.name:
            found.setdefault(folder, i)
    for p, i in node.items():  # a note beside the folder, named like it: `Pipelines.md`
        pp = PurePosixPath(p)
        beside = str(pp.with_suffix(""))
        found.setdefault(beside, i)
    out: dict[int, int] = {}
    for p, i in node.items():
        folder = str(PurePosixPath(p).parent)
        if folder in found and folder != ".":
            out[i] = found[folder]
    return out


def relations(view: QueryView) -> Relations:
    graph = NoteGraph(view.edges)
    return Relations(graph, _overviews(graph.paths))


def _why_early(view: QueryView, source: str, target: str) -> bool:
    """Whether `source` links to `target` early (in the first quarter of its links)."""
    links = [lk for lk in view.outgoing(source) if lk.status == "ok"]
    first = next((i for i, lk in enumerate(links) if lk.target == target), None)
    return first is not None and first < max(1, math.ceil(len(links) * EARLY_LINES))


def prerequisites_answer(view: QueryView, note: str, *, depth: int = 2, limit: int = 20,
                         deadline: Deadline = NO_DEADLINE) -> PrerequisitesAnswer:
    """What to read before `note`, foundations first."""
    if depth < 1 or limit < 1:
        raise UsageError("--depth and --limit must be at least 1")
    trace = Trace("prerequisites")
    path = view.lookup(note)
    rel = relations(view)
    found, partial = walk_needs(view, rel, rel.graph.node[path], depth, deadline, trace)
    ordered = order_nodes(rel, list(found), deadline=deadline)
    partial = partial or ordered.partial
    rest = sorted(set(found) - set(ordered.nodes))  # not ordered before the time ran out
    items = [Prerequisite(need.path, need.depth, need.via, need.backlinks, need.why,
                          view.notes[need.path].title)
             for need in (found[n] for n in [*ordered.nodes, *rest])]
    trace("done", found=len(items))
    return PrerequisitesAnswer(path, view.notes[path].title, depth, len(items), items[:limit],
                               len(items) > limit, partial is not None, partial, view.index_info())


def walk_needs(view: QueryView, rel: Relations, start: int, depth: int,
               deadline: Deadline = NO_DEADLINE, trace: Trace | None = None
               ) -> tuple[dict[int, Need], str | None]:
    """The notes `start` builds on, up to `depth` steps back, each with its record
    (path, depth, via, backlinks, why); and why the walk stopped early, if it did."""
    trace = trace or Trace("prerequisites")
    found: dict[int, Need] = {}
    frontier = [start]
    for level in range(1, depth + 1):
        nxt: list[int] = []
        for n in frontier:
            if deadline.expired():
                return found, deadline.reason(f"{len(found)} prerequisites found, "
                                              f"{level - 1} of {depth} levels done")
            for m, why in rel.needs(n):
                if m == start or m in found:
                    trace("skip", path=rel.graph.paths[m], reason="already listed")
                    continue
                reasons = [why]
                if why.startswith("linked") and _why_early(view, rel.graph.paths[n],
                                                           rel.graph.paths[m]):
                    reasons.append("linked near the start")
                found[m] = Need(rel.graph.paths[m], level, rel.graph.paths[n],
                                rel.backlinks(m), reasons)
                trace("keep", path=rel.graph.paths[m], depth=level,
                      via=rel.graph.paths[n], backlinks=rel.backlinks(m), why=why)
                nxt.append(m)
        frontier = nxt
    return found, None


class Ordered(Record):
    nodes: list[int]
    cycles_broken: int
    partial: str | None


def order_nodes(rel: Relations, nodes: Iterable[int], *,
                deadline: Deadline = NO_DEADLINE, trace: Trace | None = None) -> Ordered:
    """`nodes` so that each comes after those of them it builds on; ties and cycles as
    the module says."""
    chosen = set(nodes)
    needs = {n: {m for m, _ in rel.needs(n) if m in chosen} for n in chosen}
    users: dict[int, set[int]] = {n: set() for n in chosen}
    for n, ms in needs.items():
        for m in ms:
            users[m].add(n)
    waiting = {n: len(ms) for n, ms in needs.items()}

    def key(n: int) -> tuple[int, int]:
        return (-rel.backlinks(n), n)  # node numbers are in path order

    ready = [key(n) for n, w in waiting.items() if w == 0]
    heapq.heapify(ready)
    out: list[int] = []
    broken = 0
    while len(out) < len(chosen):
        if deadline.expired():
            return Ordered(out, broken, deadline.reason(
                f"{len(out)} of {len(chosen)} notes ordered"))
        if not ready:  # a cycle: start it where the fewest prerequisites are unmet
            rest = [n for n in chosen if waiting[n] > 0]
            pick = min(rest, key=lambda n: (waiting[n], *key(n)))
            broken += 1
            if trace is not None:
                trace("cycle", path=rel.graph.paths[pick], unmet=waiting[pick])
            waiting[pick] = 0
            ready = [key(pick)]
        _, n = heapq.heappop(ready)
        if waiting[n] < 0:
            continue
        waiting[n] = -1
        out.append(n)
        for u in sorted(users[n]):
            if waiting[u] > 0:
                waiting[u] -= 1
                if waiting[u] == 0:
                    heapq.heappush(ready, key(u))
    return Ordered(out, broken, None)


def reading_order_answer(view: QueryView, *, tags: Sequence[str] = (),
                         domain: str | None = None, start: str | None = None,
                         depth: int = 2, limit: int = 50,
                         deadline: Deadline = NO_DEADLINE) -> ReadingOrderAnswer:
    """An order to read a set of notes in which each comes after the notes it builds on.
    The set: the notes with every tag of `tags` and of `domain` (as `kbase notes` selects
    them), with `start` those of them within `depth` links of it (the walk goes through
    any note); default every note."""
    if limit < 1 or depth < 0:
        raise UsageError("--limit must be at least 1 and --depth at least 0")
    paths: list[str] | None = None
    if tags or domain is not None:
        from kbase_ci.query.tagtree import notes_answer  # the one reading of tag filters

        paths = [n.path for n in notes_answer(view, tags=list(tags), domain=domain).notes]
    trace = Trace("reading-order")
    rel = relations(view)
    node = rel.graph.node
    if start is not None:
        origin = view.lookup(start)
        chosen = list(rel.graph.neighbourhood(node[origin], depth))
        if paths is not None:  # the filters narrow what the walk reached
            keep = {node[p] for p in paths if p in node}
            chosen = [n for n in chosen if n in keep]
    else:
        chosen = [node[p] for p in (paths if paths is not None else rel.graph.paths)
                  if p in node]
    trace("set", notes=len(chosen))
    got = order_nodes(rel, chosen, deadline=deadline, trace=trace)
    place = {n: i for i, n in enumerate(got.nodes)}
    steps: list[Step] = []
    for i, n in enumerate(got.nodes[:limit], 1):
        p = rel.graph.paths[n]
        # What it builds on that this order puts before it (a broken cycle puts one after)
        steps.append(Step(i, p, view.notes[p].title, rel.backlinks(n),
                          sorted(rel.graph.paths[m] for m, _ in rel.needs(n)
                                 if place.get(m, len(place)) < i - 1)))
    trace("done", ordered=len(got.nodes), cycles_broken=got.cycles_broken)
    return ReadingOrderAnswer(view.lookup(start) if start is not None else None, list(tags),
                              domain, len(chosen), steps, len(got.nodes) > limit,
                              got.cycles_broken, got.partial is not None, got.partial,
                              view.index_info())


class PrerequisitesParams(Record):
    note: Note
    depth: Annotated[int, Param(ge=1, le=MAX_DEPTH,
                                help="steps back through prerequisites (default: "
                                     "%(default)s)",
                                tool="")] = 2
    limit: Annotated[int, Param(ge=1, le=MAX_LIMIT, help="most notes listed (default: 20)",
                                tool="")] = 20
    timeout: Timeout = None


def _prerequisites_run(s: Session, p: PrerequisitesParams) -> PrerequisitesAnswer:
    deadline = Deadline(p.timeout)  # opening the view counts too
    return prerequisites_answer(s.view(), p.note, depth=p.depth, limit=p.limit,
                                deadline=deadline)


def _prerequisites_lines(a: PrerequisitesAnswer) -> list[str]:
    lines = [f"{p.path}  ({'; '.join(p.why)}; needed by {p.via})" for p in a.prerequisites]
    lines.append(f"then: {a.note}")
    if a.partial:
        lines.append(f"(partial: {a.partial_reason})")
    return lines


PREREQUISITES = Query(
    "prerequisites", ("prerequisites",),
    help="what to read before a note, foundations first (no model)",
    description="The notes a note builds on: the notes it links to that more notes link to "
                "(the more basic ones), its folder's overview note, and theirs in turn up "
                "to --depth, listed so that each comes after what it needs. Exit 0 some "
                "found, 1 none, 2 no such note.",
    fold=("reading_order", "prerequisites"),
    params=PrerequisitesParams, run=_prerequisites_run, text=_prerequisites_lines,
    found=lambda a: bool(a.prerequisites),
    lists=("prerequisites",))


class ReadingOrderParams(Record):
    start: Annotated[str | None, Param(
        flag="--from", metavar="NOTE", help="the notes within --depth links of NOTE",
        tool="Notes near this note.")] = None
    depth: Annotated[int, Param(ge=0, le=MAX_DEPTH, help="links from --from (default: 2)",
                                tool="Hops from start.")] = 2
    tags: Tags = ()
    domain: Domain = None
    limit: Annotated[int, Param(ge=1, le=MAX_LIMIT, help="most notes listed (default: 50)",
                                tool="")] = 50
    timeout: Timeout = None


def _reading_order_run(s: Session, p: ReadingOrderParams) -> ReadingOrderAnswer:
    deadline = Deadline(p.timeout)  # opening the view counts too
    return reading_order_answer(s.view(), tags=list(p.tags), domain=none_if_blank(p.domain),
                                start=none_if_blank(p.start), depth=p.depth, limit=p.limit,
                                deadline=deadline)


def _reading_order_lines(a: ReadingOrderAnswer) -> list[str]:
    lines = [f"{s.step:>4}  {s.path}" + (f"  (after {', '.join(s.after)})" if s.after else "")
             for s in a.order]
    if a.truncated:
        lines.append(f"({a.count - len(a.order)} more; raise --limit)")
    if a.partial:
        lines.append(f"(partial: {a.partial_reason})")
    return lines


READING_ORDER = Query(
    "reading_order", ("reading-order",),
    help="an order to read notes in, foundations first (no model)",
    description="Orders the notes (all of them, those with --tag and --domain, or those "
                "within --depth links of --from NOTE) so that each comes after the notes it "
                "builds on: a note linked from more notes comes before the notes linking to "
                "it, a folder's overview before the folder. Exit 0 notes ordered, 1 none, 2 "
                "usage error or no such note.",
    fold=("reading_order", "order"),
    params=ReadingOrderParams, run=_reading_order_run, text=_reading_order_lines,
    found=lambda a: bool(a.order),
    lists=("order",))

QUERIES = [PREREQUISITES, READING_ORDER]
