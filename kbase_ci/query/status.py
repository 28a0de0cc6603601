"""Where the index came from, how stale it is, its sizes and its model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from kbase_ci.index.modelchoice import availability
from kbase_ci.index.scopes import ScopeState, states
from kbase_ci.query.answer import IndexInfo, ScopeRef
from kbase_ci.query.spec import Param, Query, Session
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, encode


class Source(Record):
    origin: str
    location: str
    folder: str | None


class Model(Record):
    id: str | None
    dim: int | None
    reason: str | None
    available: bool | None
    """Whether the index's model is available here (None: the index has no vectors)."""
    why: str
    """Where it was found, or why it is not available and what fixes it
    (kbase_ci.index.modelchoice.availability: nothing is downloaded to tell)."""


class Changed(Record):
    """Notes changed since the index, by how."""

    changed: list[str]
    added: list[str]
    deleted: list[str]
    relinked: list[str]


class StatusAnswer(Record):
    source: Source
    format_version: int | None
    kbase_version: str | None
    counts: dict[str, int]
    bytes: int
    model: Model
    freshness: Changed
    index: IndexInfo
    scopes: list[ScopeState] | list[ScopeRef]


def status_answer(view: QueryView, model: Path | None = None) -> StatusAnswer:
    """`model`: the `--model` folder the session was given (`kbase mcp --model`)."""
    m = view.manifest
    root = view.source.reader.root
    size = sum((root / rel).stat().st_size for rel in m.files)
    emb = m.embeddings
    fresh = view.fresh
    return StatusAnswer(
        Source(view.source.origin, view.source.location,
               str(root) if view.source.origin != "temporary" else None),
        m.format_version, m.kbase_version, encode(m.counts), size,
        Model(emb.model, emb.dim, emb.reason,
              *availability(view.vault.root, view.vault.config.embeddings, model, emb)),
        Changed(list(fresh.changed), list(fresh.added), list(fresh.deleted),
                list(fresh.relinked)),
        view.index_info(), _scopes(view))


def _scopes(view: QueryView) -> list[ScopeState] | list[ScopeRef]:
    """The scoped indexes built inside this index (kbase_ci/scope), stale or not; for a
    scoped view, just its own state."""
    scope = view.index_info().scope
    if scope is not None:
        return [scope]
    if view.source.origin == "temporary":
        return []
    return states(view.source.reader.root, view.vault.config.scopes.named)


class StatusParams(Record):
    model: Annotated[Path | None, Param(
        metavar="PATH", help="an embedding model folder: is it the index's model?")] = None


def _run(s: Session, p: StatusParams) -> StatusAnswer:
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
