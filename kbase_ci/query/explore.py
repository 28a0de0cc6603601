"""A note's neighbourhood: what it links to, what links to it, the notes most like it
that are neither (precomputed at build time, so no model is needed), and the notes that
name it without a link (`unlinked`, kbase_ci.query.mentions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.links import (
    ExternalLink,
    LinkRecord,
    external_records,
    link_label,
    link_records,
    split_external,
)
from kbase_ci.query.mentions import UnlinkedMention, unlinked_mentions
from kbase_ci.query.spec import Note, Param, Query, Session
from kbase_ci.query.traversalinfo import LinkTraversal, Metadata, hops
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
    tags: list[str]
    domain: str
    outlinks: list[LinkRecord] | list[str]
    unresolved: list[str] | None = json_field(omit=True)
    external: list[ExternalLink] | list[str]
    backlinks: list[LinkRecord] | list[str]
    similar: list[Similar]
    unlinked: list[UnlinkedMention] | list[str] | None = json_field(omit=True)
    """Notes naming it without a link (kbase_ci.query.mentions); None: not asked for."""
    link_traversal: LinkTraversal = json_field(keep=True)
    metadata: Metadata = json_field(keep=True)
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
    # One hop: the notes its links and backlinks reach, and those shown for being like it
    # or naming it.
    linked.discard(path)
    reached = linked & view.notes.keys()
    shown = reached | {s.path for s in similar} | {u.path for u in unlinked or ()}
    walk = LinkTraversal(len(out_links) + len(external) + len(back),
                         sum(1 for lk in out_links if lk.target in reached) + len(back),
                         1 if reached else 0, "one hop",
                         [1, len(reached)] if reached else [1])
    meta = Metadata(1 + len(shown), 1, len(reached), hops(1), [])
    if concise:
        return ExploreAnswer(
            path, info.title, list(info.tags), info.domain,
            outlinks=sorted({lk.target for lk in out_links if lk.status == "ok"
                             and lk.target is not None and lk.target in view.notes}),
            unresolved=sorted({lk.raw for lk in out_links if lk.status != "ok"}),
            external=sorted({e.url for e in external_records(view, external)}),
            backlinks=sorted({lk.source for lk in back}), similar=similar,
            unlinked=None if unlinked is None else list(dict.fromkeys(u.path for u in unlinked)),
            link_traversal=walk, metadata=meta, index=view.index_info())
    return ExploreAnswer(path, info.title, list(info.tags), info.domain,
                         outlinks=link_records(view, out_links, side="target"),
                         unresolved=None, external=external_records(view, external),
                         backlinks=link_records(view, back, side="source"), similar=similar,
                         unlinked=unlinked, link_traversal=walk, metadata=meta,
                         index=view.index_info())


class ExploreParams(Record):
    note: Note
    concise: Annotated[bool, Param(
        help="paths only", tool="Paths only.")
    ] = False
    no_mentions: Annotated[bool, Param(
        help="leave out unlinked mentions (notes naming it without a link)",
        tool="Leave out `unlinked`.")] = False


def _run(s: Session, p: ExploreParams) -> ExploreAnswer:
    view = s.view()
    return explore_answer(view, view.lookup(p.note), concise=p.concise,
                          mentions=not p.no_mentions)


def _lines(a: ExploreAnswer) -> list[str]:
    def paths(items: Sequence[object]) -> str:
        return ", ".join(link_label(i) if isinstance(i, LinkRecord) else
                         i if isinstance(i, str) else getattr(i, "path", "")
                         for i in items) or "-"

    return [f"note: {a.note}", f"outlinks: {paths(a.outlinks)}",
            "external: " + (", ".join(e if isinstance(e, str) else e.url
                                      for e in a.external) or "-"),
            f"backlinks: {paths(a.backlinks)}", f"similar: {paths(a.similar)}",
            *([] if a.unlinked is None else
              ["unlinked: " + (", ".join(dict.fromkeys(
                  u if isinstance(u, str) else u.path for u in a.unlinked)) or "-")])]


QUERIES = [Query(
    "explore", ("explore",), help="a note's links, backlinks and similar unlinked notes",
    description="Similar notes are precomputed in the index (no model needed). "
                "Exit 0, 2 no such note.",
    fold=("links", "explore"),
    params=ExploreParams, run=_run, text=_lines, found=lambda a: True,
    lists=("outlinks", "backlinks", "unlinked", "similar", "tags", "unresolved",
           "external"))]
