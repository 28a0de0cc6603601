"""Several queries offered to agents as one tool whose `action` parameter picks the query,
as `graph`'s `action` picks its question: every agent pays for every tool's schema in
each conversation (kbase_ci.mcp.schema), and one tool with the union of the queries'
parameters costs about half of what they cost apart. The CLI keeps a command per query
(`kbase concept X`, `kbase summarize NOTE`); a fold is the tool's side only.

A folded parameter is described as `graph`'s are (`Param.actions`: the actions taking
it; `Param.by_action`: their defaults where they differ, the tool leaving it None), and a
call is checked as `graph`'s is (`spec.refuse_unused`), then runs the action's query with
what it takes: its answer is the one its own tool gave. A query says which fold it is an
action of (`Query.fold`); a fold declares its actions' order and the description agents
read (a folded query has none of its own).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kbase_ci.errors import UsageError
from kbase_ci.query import registry
from kbase_ci.query.spec import BUDGET_ARG, Arg, Param, Query, fields_of, refuse_unused
from kbase_ci.typedjson import MISSING, Record


class Fold(Record):
    """One tool for several queries (see the module docstring)."""

    name: str
    """The MCP tool's name."""
    actions: tuple[str, ...]
    """The `action` values, in the order the tool offers them; each is the action of the
    query whose `Query.fold` names this fold and it."""
    tool: str
    """The tool's description: which action when, and what each takes."""
    when: str
    """docs/mcp.md: when an agent calls it."""
    described: Mapping[str, str] | None = None
    """A parameter's description where the queries' differ ("": none)."""


FOLDS = (
    Fold("links", ("explore", "links", "backlinks"),
         tool="What connects to a `note`: `explore` what is around it (paths only); the "
              "`links` it makes, each with line and sentence (`path` null: not written yet; "
              "`unlinked`: notes naming it without a link instead); `backlinks` to it, with "
              "sentences.",
         when='"I found note Y, what is around it" (`explore`: outlinks, backlinks, similar '
              "unlinked notes, unlinked mentions; paths only); a note's links exactly, "
              "each with line and sentence, URLs in `external` (`links`); who links to a "
              "note, and in what sentence (`backlinks`)",
         described={"unlinked": "", "concise": "Paths (and lines) only."}),
    Fold("reading_order", ("prerequisites", "order"),
         tool="Foundations first: the `prerequisites` of a `note`; an `order` to read the "
              "notes near `start`, with `tags` and `domain`, or all.",
         when="what to read before a note on an unfamiliar subject (`prerequisites`); "
              "planning the reading of a topic (`order`)",
         described={"depth": "", "start": ""}),
    Fold("tags", ("list", "suggest", "notes"),
         tool="`list` the tags with note counts (`tree`: hierarchy, `stats`: tags used "
              "together); the `notes` with all `tags` (`any_tag`: any), in `domain`; "
              "`suggest` tags for a `note`.",
         when="the tag vocabulary (`list`); notes by tag and domain (`notes`); tags a "
              "note lacks, from similar and linked notes (`suggest`)",
         described={"limit": "", "stats": "", "any_tag": ""}),
    Fold("digest", ("summarize", "concept", "concepts", "compare", "auto_index"),
         tool="`summarize` a `note` (`extract` facts or code); `concept` `name`: its "
              "definition and where it is discussed; `concepts`: the recurring terms; "
              "`compare` `a` with `b` (notes or domains) on a `concept`; `auto_index`: an "
              "overview note of a `domain` or `tags`.",
         when="the gist of a note (`summarize`), what a term means here and where it is "
              "used (`concept`), the vocabulary (`concepts`), two notes or domains side by "
              "side (`compare`), an overview note of a domain or tag (`auto_index`)",
         described={"limit": "", "extract": "", "name": "", "a": "", "b": "", "concept": "",
                    "definition": "concept: only its definition.",
                    "notes": "concept: only where it is used.",
                    "min_notes": "concepts: least notes naming it.",
                    "title": "auto_index: its heading."}),
)


def members(fold: Fold) -> dict[str, Query[Any, Any]]:
    """Each action of `fold` and the query it runs, in the fold's order."""
    got = {q.fold[1]: q for q in registry.every() if q.fold and q.fold[0] == fold.name}
    return {action: got[action] for action in fold.actions}


def tools(queries: Iterable[Query[Any, Any]] | None = None) -> list[Query[Any, Any] | Fold]:
    """What `kbase mcp` offers, in registry order: each query (of `queries`, default
    the registry's), or the fold holding it in place of the fold's first query."""
    folds = {f.name: f for f in FOLDS}
    out: list[Query[Any, Any] | Fold] = []
    for q in registry.every() if queries is None else queries:
        tool = q if q.fold is None else folds[q.fold[0]]
        if not any(t is tool for t in out):
            out.append(tool)
    return out


def as_tool(query: str, arguments: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool call asking query `query` (its MCP name when it had a tool of its own)
    with `arguments`: the fold's name and its `action`, if folded."""
    fold = registry.named(query).fold
    if fold is None:
        return query, dict(arguments)
    return fold[0], {"action": fold[1], **arguments}


def args_of(fold: Fold, queries: Mapping[str, Query[Any, Any]]) -> list[Arg]:
    """The tool's parameters (`queries`: its `members`): `action`, then each query's (in
    action order) once, a parameter not every action takes (or not with one default)
    being optional, with the actions taking it and their defaults (`Param.actions`,
    `Param.by_action`)."""
    takers: dict[str, list[tuple[str, Arg]]] = {}
    for action, query in queries.items():
        for f in fields_of(query.params):
            if f.param.tool is not None:
                takers.setdefault(f.name, []).append((action, f))
    out = [Arg("action", str, False, False, MISSING,
               Param(choices=tuple(fold.actions), tool=""))]
    for name, taking in takers.items():
        first = taking[0][1]
        texts = {f.param.tool for _, f in taking}
        described = (fold.described or {}).get(name)
        if described is None and len(texts) > 1:
            raise ValueError(f"fold {fold.name}: describe {name} (the queries differ)")
        if any((f.type, f.many) != (first.type, first.many) for _, f in taking):
            raise ValueError(f"fold {fold.name}: {name} has one type per query")
        param = first.param._replace(
            tool=described if described is not None else first.param.tool,
            actions=() if len(taking) == len(fold.actions) else tuple(a for a, _ in taking),
            # the loosest bounds of the actions on the tool; each its own when it runs
            ge=_loosest(min, [f.param.ge for _, f in taking]),
            gt=_loosest(min, [f.param.gt for _, f in taking]),
            tool_le=_loosest(max, [f.param.tool_le for _, f in taking]))
        defaults = {a: f.default for a, f in taking}
        if not param.actions and len({repr(d) for d in defaults.values()}) == 1:
            out.append(first._replace(param=param))
            continue
        shown = {a: d for a, d in defaults.items() if d not in (MISSING, None, False, ())}
        flag = first.type is bool and not first.many
        out.append(Arg(name, first.type, not flag, first.many, False if flag else None,
                       param._replace(by_action=shown or None)))
    return out


def _loosest(choose: Any, bounds: list[Any]) -> Any:
    """`choose` (min or max) of the actions' bounds; None when one action has none."""
    return None if None in bounds else choose(bounds)


def pick(fold: Fold, queries: Mapping[str, Query[Any, Any]], arguments: Mapping[str, Any]
         ) -> tuple[Query[Any, Any], dict[str, Any]]:
    """The query a call's `action` runs, and what it takes of the call's arguments: a
    parameter its action does not take is refused (as `graph` refuses one), one it needs
    and lacks is named, a bound of its own (`Param.tool_le`) is checked."""
    action = arguments["action"]
    query = queries[action]
    own = {f.name: f for f in fields_of(query.params) if f.param.tool is not None}
    given = {k: v for k, v in arguments.items() if k != "action"}
    required = [n for n, f in own.items() if f.required]
    refuse_unused(action, {k: v for k, v in given.items() if k != BUDGET_ARG.name}, list(own),
                  required)
    missing = [n for n in required if given.get(n) in (None, "")]
    if missing:
        raise UsageError(f"action {action} needs {' and '.join(missing)}",
                         parameter=missing[0])
    for name, f in own.items():
        high, value = f.param.tool_le, given.get(name)
        if high is not None and isinstance(value, int) and value > high:
            raise UsageError(f"{name} must be at most {high} for action {action}, not {value}",
                             parameter=name)
    return query, {k: v for k, v in given.items()
                   if v is not None and (k in own or k == BUDGET_ARG.name)}
