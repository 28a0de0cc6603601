"""`reading-order`: an order to read notes in, each after what it builds on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.spec import (
    MAX_DEPTH,
    MAX_LIMIT,
    Domain,
    Param,
    Query,
    Session,
    Tags,
    Timeout,
    none_if_blank,
)
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.readingorder import ReadingOrderAnswer


class ReadingOrderParams(Record):
    start: Annotated[str | None, Param(
        flag="--from", metavar="NOTE", help="the notes within --depth links of NOTE",
        tool="Notes near this note.")] = None
    depth: Annotated[int, Param(ge=0, le=MAX_DEPTH, help="links from --from (default: 2)",
                                tool="Hops from start.")] = 2
    tags: Tags = ()
    domain: Domain = None
    limit: Annotated[int, Param(ge=1, le=MAX_LIMIT, help="most notes listed (default: 50)",
                                tool="")] = 50
    timeout: Timeout = None


def _run(s: Session, p: ReadingOrderParams) -> ReadingOrderAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.readingorder import reading_order_answer
    from kbase_ci.query.trace import Deadline

    deadline = Deadline(p.timeout)  # opening the view counts too
    return reading_order_answer(s.view(), tags=list(p.tags), domain=none_if_blank(p.domain),
                                start=none_if_blank(p.start), depth=p.depth, limit=p.limit,
                                deadline=deadline)


def _lines(a: ReadingOrderAnswer) -> list[str]:
    lines = [f"{s.step:>4}  {s.path}" + (f"  (after {', '.join(s.after)})" if s.after else "")
             for s in a.order]
    if a.truncated:
        lines.append(f"({a.count - len(a.order)} more; raise --limit)")
    if a.partial:
        lines.append(f"(partial: {a.partial_reason})")
    return lines


QUERIES = [Query(
    "reading_order", ("reading-order",),
    help="an order to read notes in, foundations first (no model)",
    description="Orders the notes (all of them, those with --tag and --domain, or those "
                "within --depth links of --from NOTE) so that each comes after the notes it "
                "builds on: a note linked from more notes comes before the notes linking to "
                "it, a folder's overview before the folder. Exit 0 notes ordered, 1 none, 2 "
                "usage error or no such note.",
    tool="An order to read notes in, foundations first: those near `start`, with `tags` and "
         "`domain`, or all.",
    when="planning the reading of a topic",
    params=ReadingOrderParams, run=_run, text=_lines, found=lambda a: bool(a.order),
    lists=("order",))]
