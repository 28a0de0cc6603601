"""Where the index came from, how stale it is, its sizes and its model."""

from __future__ import annotations

from typing import Any

from kbase_ci.index.scopes import states
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import encode


def status_answer(view: QueryView) -> dict[str, Any]:
    m = view.manifest
    root = view.source.reader.root
    size = sum((root / rel).stat().st_size for rel in m.files)
    emb = m.embeddings
    fresh = view.fresh
    return {
        "source": {"origin": view.source.origin, "location": view.source.location,
                   "folder": str(root) if view.source.origin != "memory" else None},
        "format_version": m.format_version, "kbase_version": m.kbase_version,
        "counts": encode(m.counts), "bytes": size,
        "model": {"id": emb.model, "dim": emb.dim, "reason": emb.reason},
        "freshness": {"changed": list(fresh.changed), "added": list(fresh.added),
                      "deleted": list(fresh.deleted), "relinked": list(fresh.relinked)},
        "index": view.index_info(),
        "scopes": _scopes(view),
    }


def _scopes(view: QueryView) -> list[dict[str, Any]]:
    """The scoped indexes built inside this index (kbase_ci/scope), stale or not; for a
    scoped view, just its own state."""

    if view.source.scope is not None:
        return [view.source.scope]
    if view.source.origin == "memory":
        return []
    return states(view.source.reader.root, view.vault.config.scopes.named)
