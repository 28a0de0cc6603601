"""`read`: a note, a section (`NOTE#heading`) or a block (`NOTE#^id`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.spec import MAX_DEPTH, Param, Query, Session
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.read import ReadAnswer


class ReadParams(Record):
    note: Annotated[str, Param(
        positional=True, metavar="NOTE[#heading|#^block]",
        tool="")]
    section: Annotated[str | None, Param(
        cli=False, tool="A heading (`A > B` when nested) or `^blockid`.")] = None
    expand_links: Annotated[bool, Param(
        help="also return the notes it links to",
        tool="Add the text of the linked notes.")] = False
    depth: Annotated[int, Param(
        ge=0, le=MAX_DEPTH, help="link depth for --expand-links",
        tool="Hops for expand_links.")] = 1


def _run(s: Session, p: ReadParams) -> ReadAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.read import read_answer

    target = p.note.strip()
    if p.section and p.section.strip():  # a tool names the section apart
        target = f"{target}#{p.section.strip().lstrip('#')}"
    return read_answer(s.view(), target, expand=p.expand_links, depth=p.depth,
                       max_tokens=s.max_tokens if p.expand_links else None)


def _lines(a: ReadAnswer) -> list[str]:
    lines = [a.text]
    for item in a.linked:
        lines += ["", f"--- {item.path} (depth {item.depth})", item.text]
    return lines


QUERIES = [Query(
    "read", ("read",), help="print a note, one section or one block",
    description="NOTE is a path, a note name or an alias, optionally followed by #heading "
                "or #^block. Exit 0 found, 2 no such note.",
    tool="A note's text, or only one `section` of it (cheaper).",
    when="reading a note, or only the section a search hit named",
    params=ReadParams, run=_run, text=_lines, found=lambda a: True,
    # No list is what it is for: its `text` is (the linked notes share what it leaves,
    # kbase_ci.query.linkpack), so they give way first.
    lists=())]
