"""A note's neighbourhood: what it links to, what links to it, the notes most like it
that are neither (precomputed at build time, so no model is needed), and the notes that
name it without a link (`unlinked`, kbase_ci.query.mentions)."""

from __future__ import annotations

from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.links import (
    ExternalLink,
    LinkRecord,
    external_records,
    link_records,
    split_external,
)
from kbase_ci.query.mentions import UnlinkedMention, unlinked_mentions
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field

SIMILAR = 5


class Similar(Record):
    path: str
    title: str
    score: float


class ExploreAnswer(Record):
    """`concise`: paths only (outlinks, `unresolved` link texts, URLs, backlinks)."""

    note: str = json_field(keep=True)
    title: str
    tags: list[str] = json_field(primary=True)
    domain: str
    outlinks: list[LinkRecord] | list[str]
    unresolved: list[str] | None = json_field(omit=True, primary=True)
    external: list[ExternalLink] | list[str]
    backlinks: list[LinkRecord] | list[str] = json_field(primary=True)
    similar: list[Similar] = json_field(primary=True)
    unlinked: list[UnlinkedMention] | list[str] | None = json_field(omit=True, primary=True)
    """Notes naming it without a link (kbase_ci.query.mentions); None: not asked for."""
    index: IndexInfo


def explore_answer(view: QueryView, path: str, *, concise: bool = False,
                   mentions: bool = True) -> ExploreAnswer:
    info = view.notes[path]
    out_links, external = split_external(view.outgoing(path))
    back = view.backlinks(path)
    linked = {lk.target for lk in out_links} | {lk.source for lk in back} | {path}
    similar = [Similar(p, view.notes[p].title, s)
               for p, s in info.similar if p not in linked and p in view.notes][:SIMILAR]
    unlinked = unlinked_mentions(view, path)[0] if mentions else None
    if concise:
        return ExploreAnswer(
            path, info.title, list(info.tags), info.domain,
            outlinks=sorted({lk.target for lk in out_links if lk.status == "ok"
                             and lk.target is not None and lk.target in view.notes}),
            unresolved=sorted({lk.raw for lk in out_links if lk.status != "ok"}),
            external=sorted({e.url for e in external_records(view, external)}),
            backlinks=sorted({lk.source for lk in back}), similar=similar,
            unlinked=None if unlinked is None else list(dict.fromkeys(u.path for u in unlinked)),
            index=view.index_info())
    return ExploreAnswer(path, info.title, list(info.tags), info.domain,
                         outlinks=link_records(view, out_links, side="target"),
                         unresolved=None, external=external_records(view, external),
                         backlinks=link_records(view, back, side="source"), similar=similar,
                         unlinked=unlinked, index=view.index_info())
