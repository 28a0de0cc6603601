"""The answers behind the MCP tools: the CLI's answer functions on a view of the warm index
that is right for the work tree at the moment of the call, so a tool result is the CLI's
JSON for the same question.

Each function raises `UsageError` with an actionable message for a bad argument, an
unknown note, or an empty answer; the server turns that into a tool error.
"""

from __future__ import annotations

from typing import Any

from kbase_ci.errors import UsageError
from kbase_ci.handover.latest import latest
from kbase_ci.mcp.warm import Warm
from kbase_ci.query.context import context_answer
from kbase_ci.query.explore import explore_answer
from kbase_ci.query.gaps import gaps_answer
from kbase_ci.query.payload import dumps
from kbase_ci.query.read import read_answer
from kbase_ci.query.search import search_answer

SEARCH_MODES = ("hybrid", "bm25", "semantic")


def _limit(value: int, name: str = "limit", top: int = 100) -> int:
    if not 1 <= value <= top:
        raise UsageError(f"{name} must be between 1 and {top}, not {value}")
    return value


def search(warm: Warm, query: str, *, mode: str = "hybrid", domain: str | None = None,
           tags: list[str] | None = None, limit: int = 5, concise: bool = False,
           snippets: bool = False) -> dict[str, Any]:
    if not query.strip():
        raise UsageError("query is empty: say what you are looking for in a few words")
    if mode not in SEARCH_MODES:
        raise UsageError(f"mode must be one of {', '.join(SEARCH_MODES)}, not {mode!r}")
    view = warm.view()
    embedder, notice = (None, None) if mode == "bm25" else warm.embedder(view)
    answer = search_answer(view, query, mode=mode, limit=_limit(limit), tags=list(tags or []),
                           domain=domain or None, snippets=snippets, concise=concise,
                           model=warm.model, embedder=embedder, model_notice=notice)
    if not answer["results"]:
        hints = ["try fewer or different words"]
        if tags:
            hints.append("drop the tag filter")
        if domain:
            hints.append("drop the domain filter")
        if mode == "semantic":
            hints.append("use mode bm25")
        # What was tried and the nearest misses, as the CLI's answer says them.
        raise UsageError(f"no results for {query!r}: " + ", or ".join(hints) + "\n"
                         + dumps({"not_found": answer["not_found"]}))
    return answer


def explore(warm: Warm, note: str, *, concise: bool = False) -> dict[str, Any]:
    view = warm.view()
    return explore_answer(view, view.lookup(note), concise=concise)


def read(warm: Warm, note: str, *, section: str | None = None) -> dict[str, Any]:
    target = note.strip()
    if section and section.strip():
        target = f"{target}#{section.strip().lstrip('#')}"
    return read_answer(warm.view(), target)


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


def gaps(warm: Warm, *, domain: str | None = None, limit: int = 20,
         min_notes: int = 3, concise: bool = False) -> dict[str, Any]:
    answer: dict[str, Any] = gaps_answer(warm.view(), domain=domain or None,
                                         limit=_limit(limit), min_notes=min_notes,
                                         concise=concise)
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
