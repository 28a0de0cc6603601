"""`backlinks`: the notes that link to a note, with line and sentence."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.spec import Note, Param, Query, Session
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.links import BacklinksAnswer


class BacklinksParams(Record):
    note: Note
    concise: Annotated[bool, Param(help="paths and lines only",
                                   tool="Path and line only.")] = False


def _run(s: Session, p: BacklinksParams) -> BacklinksAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.links import backlinks_answer

    view = s.view()
    return backlinks_answer(view, view.lookup(p.note), concise=p.concise)


def _lines(a: BacklinksAnswer) -> list[str]:
    return [f"{lk.path}:{lk.line}  {getattr(lk, 'sentence', '')}".rstrip()
            for lk in a.backlinks] or [f"no note links to {a.note}"]


QUERIES = [Query(
    "backlinks", ("backlinks",), help="notes linking to a note",
    description="Exit 0 backlinks found, 1 none, 2 no such note.",
    tool="Who links to a note, with each link's sentence. Check it before renaming or changing a"
         " note.",
    when="who links to a note, and in what sentence",
    params=BacklinksParams, run=_run, text=_lines, found=lambda a: bool(a.backlinks),
    lists=("backlinks",))]
