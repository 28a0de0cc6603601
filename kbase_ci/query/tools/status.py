"""`status`: where the query index comes from, how stale it is, sizes, model."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.spec import Param, Query, Session
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.status import StatusAnswer


class StatusParams(Record):
    model: Annotated[Path | None, Param(
        metavar="PATH", help="an embedding model folder: is it the index's model?")] = None


def _run(s: Session, p: StatusParams) -> StatusAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.status import status_answer

    return status_answer(s.view(), p.model or s.model)


def _lines(a: StatusAnswer) -> list[str]:
    src, fr = a.source, a.freshness
    return [
        f"index: {src.origin} {src.location}".rstrip(),
        f"source commit: {a.index.source_commit}  built {a.index.built_at}",
        f"notes: {a.counts.get('notes')}  chunks: {a.counts.get('chunks')}  bytes: {a.bytes}",
        f"model: {a.model.id} ({a.model.reason or 'vectors'})",
        f"model here: {_here(a.model.available)}: {a.model.why}",
        f"stale: {len(fr.changed)} changed, {len(fr.added)} added, "
        f"{len(fr.deleted)} deleted"]


def _here(available: bool | None) -> str:
    return {True: "available", False: "not available", None: "none"}[available]


QUERIES = [Query(
    "status", ("status",), help="the query index: origin, staleness, sizes, model",
    tool="Where the index is from and which notes changed since: call it when answers look "
         "stale.",
    when="where the index comes from, how stale it is",
    params=StatusParams, run=_run, text=_lines, found=lambda a: True, stale_ok=True,
    lists=("freshness.changed", "freshness.added", "freshness.deleted", "freshness.relinked",
           "scopes"))]
