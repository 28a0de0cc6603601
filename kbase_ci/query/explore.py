"""A note's neighbourhood: what it links to, what links to it, and the notes most like it
that are neither (precomputed at build time, so no model is needed)."""

from __future__ import annotations

from typing import Any

from kbase_ci.query.links import external_records, link_records, split_external
from kbase_ci.query.view import QueryView

SIMILAR = 5


def explore_answer(view: QueryView, path: str, *, concise: bool = False) -> dict[str, Any]:
    info = view.notes[path]
    out_links, external = split_external(view.outgoing(path))
    back = view.backlinks(path)
    linked = {lk.target for lk in out_links} | {lk.source for lk in back} | {path}
    similar = [{"path": p, "title": view.notes[p].title, "score": s}
               for p, s in info.similar if p not in linked and p in view.notes][:SIMILAR]
    answer: dict[str, Any] = {"note": path, "title": info.title, "tags": list(info.tags),
                              "domain": info.domain}
    if concise:
        answer["outlinks"] = sorted({lk.target for lk in out_links
                                     if lk.status == "ok" and lk.target in view.notes})
        answer["unresolved"] = sorted({lk.raw for lk in out_links if lk.status != "ok"})
        answer["external"] = sorted({e["url"] for e in external_records(view, external)})
        answer["backlinks"] = sorted({lk.source for lk in back})
    else:
        answer["outlinks"] = link_records(view, out_links, side="target")
        answer["external"] = external_records(view, external)
        answer["backlinks"] = link_records(view, back, side="source")
    answer["similar"] = similar
    answer["index"] = view.index_info()
    return answer
