"""The answers behind the MCP tools: the CLI's answer functions on a view of the warm index
that is right for the work tree at the moment of the call, so a tool result is the CLI's
JSON for the same question.

Each function raises `UsageError` with an actionable message for a bad argument, an
unknown note, or an empty answer (`Empty`, which carries the CLI's answer too); the
server turns that into a tool error.
"""

from __future__ import annotations

import re
from typing import Any

from kbase_ci.errors import UsageError
from kbase_ci.handover.latest import latest
from kbase_ci.mcp.warm import Warm
from kbase_ci.query.context import context_answer
from kbase_ci.query.explore import explore_answer
from kbase_ci.query.gaps import KINDS, gaps_answer
from kbase_ci.query.graphanswer import graph_answer
from kbase_ci.query.links import backlinks_answer, links_answer
from kbase_ci.query.read import read_answer
from kbase_ci.query.readingorder import prerequisites_answer, reading_order_answer
from kbase_ci.query.search import search_answer
from kbase_ci.query.status import status_answer
from kbase_ci.query.tagsuggest import suggest_answer
from kbase_ci.query.tagtree import notes_answer, tags_answer
from kbase_ci.query.trace import Deadline

SEARCH_MODES = ("hybrid", "bm25", "semantic")


class Empty(UsageError):
    """Nothing found (the CLI exits 1): a tool error whose text is this message, then the
    CLI's JSON answer (what was tried, the nearest misses, notices, the index)."""

    def __init__(self, message: str, answer: dict[str, Any]) -> None:
        super().__init__(message)
        self.answer = answer


def _limit(value: int, name: str = "limit", top: int = 100) -> int:
    if not 1 <= value <= top:
        raise UsageError(f"{name} must be between 1 and {top}, not {value}")
    return value


def search(warm: Warm, query: str, *, mode: str = "hybrid", domain: str | None = None,
           tags: list[str] | None = None, limit: int = 5, concise: bool = False,
           snippets: bool = False, explain: bool = False) -> dict[str, Any]:
    if not query.strip():
        raise UsageError("query is empty: say what you are looking for in a few words")
    if mode not in SEARCH_MODES:
        raise UsageError(f"mode must be one of {', '.join(SEARCH_MODES)}, not {mode!r}")
    view = warm.view()
    embedder, notice = (None, None) if mode == "bm25" else warm.embedder(view)
    answer = search_answer(view, query, mode=mode, limit=_limit(limit), tags=list(tags or []),
                           domain=domain or None, snippets=snippets, concise=concise,
                           explain=explain, model=warm.model, embedder=embedder,
                           model_notice=notice)
    if not answer["results"]:
        hints = ["try fewer or different words"]
        if tags:
            hints.append("drop the tag filter")
        if domain:
            hints.append("drop the domain filter")
        if mode == "semantic":
            hints.append("use mode bm25")
        raise Empty(f"no results for {query!r}: " + ", or ".join(hints), answer)
    return answer


def explore(warm: Warm, note: str, *, concise: bool = False) -> dict[str, Any]:
    view = warm.view()
    return explore_answer(view, view.lookup(note), concise=concise)


def read(warm: Warm, note: str, *, section: str | None = None, expand_links: bool = False,
         depth: int = 1) -> dict[str, Any]:
    target = note.strip()
    if section and section.strip():
        target = f"{target}#{section.strip().lstrip('#')}"
    return read_answer(warm.view(), target, expand=expand_links, depth=depth)


def context(warm: Warm, *, note: str | None = None, query: str | None = None,
            strategy: str = "breadth", depth: str | int = "standard", max_tokens: int = 8000,
            follow_tags: list[str] | None = None, concise: bool = False) -> dict[str, Any]:
    note, query = (note or "").strip() or None, (query or "").strip() or None
    if note is None and query is None:
        raise UsageError("give a note (to start from it) or a query (to start from the "
                         "best search hits)")
    view = warm.view()
    answer: dict[str, Any] = context_answer(
        view, note=note, query=query, strategy=strategy, depth=depth, max_tokens=max_tokens,
        follow_tags=tuple(follow_tags or ()), concise=concise)
    return answer


def gaps(warm: Warm, *, kinds: list[str] | None = None, domain: str | None = None,
         limit: int = 20, min_notes: int = 3, concise: bool = False) -> dict[str, Any]:
    bad = sorted(set(kinds or ()) - set(KINDS))
    if bad:
        raise UsageError(f"kinds may hold {', '.join(KINDS)}, not {', '.join(bad)}")
    answer: dict[str, Any] = gaps_answer(warm.view(), kinds=kinds or KINDS,
                                         domain=domain or None, limit=_limit(limit),
                                         min_notes=min_notes, concise=concise)
    return answer


def handover_latest(warm: Warm, *, track: str | None = None) -> dict[str, Any]:
    track = (track or "").strip() or None
    found = latest(warm.vault(), track)
    if found is None:
        which = f" for track {track}" if track else ""
        raise UsageError(f"no handover{which}: a handover is a note with `type: handover` "
                         "(or tag #handover, or under handovers/); "
                         + ("try without a track" if track else "none is written yet"))
    return found.to_json()


def links(warm: Warm, note: str) -> dict[str, Any]:
    view = warm.view()
    return links_answer(view, view.lookup(note))


def backlinks(warm: Warm, note: str, *, concise: bool = False) -> dict[str, Any]:
    view = warm.view()
    return backlinks_answer(view, view.lookup(note), concise=concise)


GRAPH_DEFAULTS = {"path": {"limit": 20}, "neighborhood": {"depth": 1, "limit": 200},
                  "hubs": {"min_links": 3, "limit": 20}, "clusters": {"min_size": 3, "limit": 20},
                  "orphans": {}, "explore": {"depth": 2, "limit": 200}}
"""The CLI's defaults per `kbase graph` action (a parameter left out means these)."""


def graph(warm: Warm, action: str, *, note: str | None = None, source: str | None = None,
          target: str | None = None, depth: int | None = None, limit: int | None = None,
          directed: bool = False, all_paths: bool = False, min_links: int | None = None,
          min_size: int | None = None, no_backlinks: bool = False, summary: bool = False,
          timeout: float | None = None, concise: bool = False) -> dict[str, Any]:
    if action not in GRAPH_DEFAULTS:
        raise UsageError(f"action must be one of {', '.join(GRAPH_DEFAULTS)}, not {action!r}")
    given = {"depth": depth, "limit": limit, "min_links": min_links, "min_size": min_size}
    params: dict[str, Any] = {**GRAPH_DEFAULTS[action],
                              **{k: v for k, v in given.items()
                                 if v is not None and k in GRAPH_DEFAULTS[action]}}
    unused = sorted(k for k, v in given.items() if v is not None and k not in params)
    if unused:
        raise UsageError(f"action {action} takes no {', '.join(unused)}")
    if action in ("neighborhood", "explore") and not (note or "").strip():
        raise UsageError(f"action {action} needs note: the note to start from")
    if action == "path":
        if not (source or "").strip() or not (target or "").strip():
            raise UsageError("action path needs source and target: the two notes to join")
        params.update(source=source, target=target, directed=directed, all_paths=all_paths)
    elif action == "neighborhood":
        params.update(note=note, directed=directed)
    elif action == "orphans":
        params.update(no_backlinks=no_backlinks)
    elif action == "explore":
        params.update(note=note, summary=summary, deadline=Deadline(timeout))
    return graph_answer(warm.view(), action, concise=concise, **params)


def notes(warm: Warm, *, tags: list[str] | None = None, any_tag: bool = False,
          domain: str | None = None) -> dict[str, Any]:
    return notes_answer(warm.view(), tags=list(tags or []), any_tag=any_tag,
                        domain=domain or None)


def tags(warm: Warm, *, tree: bool = False, stats: bool = False,
         limit: int = 50) -> dict[str, Any]:
    if limit < 0:
        raise UsageError(f"limit must be at least 0, not {limit}")
    return tags_answer(warm.view(), tree=tree, stats=stats, limit=limit)


def tags_suggest(warm: Warm, note: str, *, limit: int = 5) -> dict[str, Any]:
    return suggest_answer(warm.view(), note, limit=_limit(limit))


def status(warm: Warm) -> dict[str, Any]:
    return status_answer(warm.view())


def prerequisites(warm: Warm, note: str, *, depth: int = 2, limit: int = 20,
                  timeout: float | None = None) -> dict[str, Any]:
    return prerequisites_answer(warm.view(), note, depth=depth, limit=limit,
                                deadline=Deadline(timeout))


def reading_order(warm: Warm, *, start: str | None = None, tags: list[str] | None = None,
                  domain: str | None = None, depth: int = 2, limit: int = 50,
                  timeout: float | None = None) -> dict[str, Any]:
    return reading_order_answer(warm.view(), tags=list(tags or []), domain=domain or None,
                                start=(start or "").strip() or None, depth=depth,
                                limit=limit, deadline=Deadline(timeout))


_FLAG = re.compile(r"(?<![\w`-])--([a-z][a-z0-9-]*)(?: PATH| DIR| NAME)?")
_SERVER_OPTIONS = {"model": "`kbase mcp --model PATH`", "index": "`kbase mcp --index DIR`",
                   "scope": "`kbase mcp --scope NAME`"}


def in_parameters(message: str) -> str:
    """A CLI message in the words of the tools: `--max-tokens` is the parameter
    `max_tokens`, `NOTE` is `note`, and `--model` an option to start the server with."""
    def name(m: re.Match[str]) -> str:
        flag = m.group(1)
        if flag in _SERVER_OPTIONS:
            return f"start the server with {_SERVER_OPTIONS[flag]}"
        return {"query": "query", "from": "start", "tag": "tags", "any": "any_tag",
                "all": "all_paths"}.get(flag, flag.replace("-", "_"))

    message = re.sub(r"\bpass (?=--model)", "", message)
    # A quoted option with its value (`--model PATH/TO/name`) keeps the value the hint names.
    message = _FLAG.sub(name, message)
    message = re.sub(r"(?:\bpass )?`--(model|index|scope) ([^`\s]+)`",
                     r"start the server with `kbase mcp --\1 \2`", message)
    return re.sub(r"\bNOTE\b", "note", message)
