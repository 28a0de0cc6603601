"""`explore`: a note's outlinks, backlinks and similar notes it is not linked with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.links import link_label
from kbase_ci.query.tools.spec import Note, Param, Query, Session
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.explore import ExploreAnswer


class ExploreParams(Record):
    note: Note
    concise: Annotated[bool, Param(
        help="paths only", tool="Paths only.")
    ] = False
    no_mentions: Annotated[bool, Param(
        help="leave out unlinked mentions (notes naming it without a link)",
        tool="Leave out `unlinked`.")] = False


def _run(s: Session, p: ExploreParams) -> ExploreAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.explore import explore_answer

    view = s.view()
    return explore_answer(view, view.lookup(p.note), concise=p.concise,
                          mentions=not p.no_mentions)


def _lines(a: ExploreAnswer) -> list[str]:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.links import LinkRecord

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
    tool="What is around a note: links, backlinks, similar unlinked notes. Paths only (`context`"
         " gives text).",
    when='"I found note Y, what is around it": outlinks (`path: null`: referenced but not '
         "written yet; URLs apart in `external`), backlinks with their sentence, similar "
         "unlinked notes; paths only, no text",
    params=ExploreParams, run=_run, text=_lines, found=lambda a: True,
    lists=("outlinks", "backlinks", "unlinked", "similar", "tags", "unresolved",
           "external"))]
