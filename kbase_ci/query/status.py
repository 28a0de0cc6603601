"""Where the index came from, how stale it is, its sizes and its model."""

from __future__ import annotations

from typing import Any

from kbase_ci.index.scopes import states
from kbase_ci.query.view import QueryView


def status_answer(view: QueryView) -> dict[str, Any]:
    m = view.manifest
    root = view.source.reader.root
    size = sum((root / rel).stat().st_size for rel in m.get("files", {}))
    emb = m.get("embeddings", {})
    fresh = view.fresh
    return {
        "source": {"origin": view.source.origin, "location": view.source.location,
                   "folder": str(root) if view.source.origin != "memory" else None},
        "format_version": m.get("format_version"), "kbase_version": m.get("kbase_version"),
        "counts": m.get("counts", {}), "bytes": size,
        "model": {"id": emb.get("model"), "dim": emb.get("dim"), "reason": emb.get("reason")},
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
