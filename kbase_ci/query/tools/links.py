"""`links`: the links a note makes, with line and sentence."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kbase_ci.query.tools.spec import Note, Query, Session
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.links import LinkRecord, LinksAnswer


class NoteParams(Record):
    note: Note


def _run(s: Session, p: NoteParams) -> LinksAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.links import links_answer

    view = s.view()
    return links_answer(view, view.lookup(p.note))


_WHY = {"unresolved": "not yet written", "escapes": "outside the vault",
        "out_of_scope": "outside this scope"}


def link_label(link: LinkRecord) -> str:
    """A link's target for people: its path, or why there is none, and the text written."""
    if link.path:
        return link.path
    return f"({_WHY.get(link.status, link.status)}) {link.raw}"


def _lines(a: LinksAnswer) -> list[str]:
    rows = [(lk.line, lk.col, f"{link_label(lk)}  {lk.sentence}") for lk in a.links]
    rows += [(e.line, e.col, f"(external) {e.url}  {e.sentence}") for e in a.external]
    return [f"{line}: {text}" for line, _col, text in sorted(rows)]


QUERIES = [Query(
    "links", ("links",),
    help="links from a note (path null: referenced, not yet written; URLs apart, in "
         "external)",
    description="The note's links with line and sentence: `links` for notes and "
                "attachments (path null: not written yet, or outside the vault), "
                "`external` for URLs. Exit 0 links found, 1 none, 2 no such note.",
    tool="The links a note makes, each with its line and sentence (`path` null: not written yet).",
    when="a note's links exactly, each with line and sentence; URLs in `external`",
    params=NoteParams, run=_run, text=_lines, found=lambda a: bool(a.links or a.external))]
