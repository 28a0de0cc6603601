"""`links`: the links a note makes, with line and sentence."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.spec import Note, Param, Query, Session
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.links import LinkRecord, LinksAnswer
    from kbase_ci.query.mentions import UnlinkedAnswer


class LinksParams(Record):
    note: Note
    unlinked: Annotated[bool, Param(
        help="instead: notes naming it (title, alias) without a link either way",
        tool="Instead: notes naming it without a link either way.")] = False


def _run(s: Session, p: LinksParams) -> LinksAnswer | UnlinkedAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.links import links_answer
    from kbase_ci.query.mentions import unlinked_answer

    view = s.view()
    path = view.lookup(p.note)
    return unlinked_answer(view, path) if p.unlinked else links_answer(view, path)


_WHY = {"unresolved": "not yet written", "escapes": "outside the vault",
        "out_of_scope": "outside this scope"}


def link_label(link: LinkRecord) -> str:
    """A link's target for people: its path, or why there is none, and the text written."""
    if link.path:
        return link.path
    return f"({_WHY.get(link.status, link.status)}) {link.raw}"


def _lines(a: LinksAnswer | UnlinkedAnswer) -> list[str]:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.mentions import UnlinkedAnswer

    if isinstance(a, UnlinkedAnswer):
        return [f"{u.path}:{u.line}:{u.col}: {u.text}  {u.sentence}" for u in a.unlinked] \
            or [f"no note names {a.note} without a link (looked for: "
                f"{', '.join(a.names) or '-'})"]
    rows = [(lk.line, lk.col, f"{link_label(lk)}  {lk.sentence}") for lk in a.links]
    rows += [(e.line, e.col, f"(external) {e.url}  {e.sentence}") for e in a.external]
    return [f"{line}: {text}" for line, _col, text in sorted(rows)] \
        or [f"no links in {a.note}"]


def _found(a: LinksAnswer | UnlinkedAnswer) -> bool:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.mentions import UnlinkedAnswer

    return bool(a.unlinked) if isinstance(a, UnlinkedAnswer) else bool(a.links or a.external)


QUERIES = [Query(
    "links", ("links",),
    help="links from a note (path null: referenced, not yet written; URLs apart, in "
         "external)",
    description="The note's links with line and sentence: `links` for notes and "
                "attachments (path null: not written yet, or outside the vault), "
                "`external` for URLs. `--unlinked`: instead, the notes naming it in "
                "prose (title or alias) that are not linked with it either way. Exit 0 "
                "found, 1 none, 2 no such note.",
    tool="The links a note makes, each with its line and sentence (`path` null: not written "
         "yet), or with `unlinked` the notes naming it without a link.",
    when="a note's links exactly, each with line and sentence; URLs in `external`",
    params=LinksParams, run=_run, text=_lines, found=_found,
    lists=("links", "unlinked", "external"))]

