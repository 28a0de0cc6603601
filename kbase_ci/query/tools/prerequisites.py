"""`prerequisites NOTE`: what to read before a note (from links and folders)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.spec import MAX_DEPTH, MAX_LIMIT, Note, Param, Query, Session, Timeout
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.readingorder import PrerequisitesAnswer


class PrerequisitesParams(Record):
    note: Note
    depth: Annotated[int, Param(ge=1, le=MAX_DEPTH,
                                help="steps back through prerequisites (default: "
                                     "%(default)s)",
                                tool="")] = 2
    limit: Annotated[int, Param(ge=1, le=MAX_LIMIT, help="most notes listed (default: 20)",
                                tool="")] = 20
    timeout: Timeout = None


def _run(s: Session, p: PrerequisitesParams) -> PrerequisitesAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.readingorder import prerequisites_answer
    from kbase_ci.query.trace import Deadline

    deadline = Deadline(p.timeout)  # opening the view counts too
    return prerequisites_answer(s.view(), p.note, depth=p.depth, limit=p.limit,
                                deadline=deadline)


def _lines(a: PrerequisitesAnswer) -> list[str]:
    lines = [f"{p.path}  ({'; '.join(p.why)}; needed by {p.via})" for p in a.prerequisites]
    lines.append(f"then: {a.note}")
    if a.partial:
        lines.append(f"(partial: {a.partial_reason})")
    return lines


QUERIES = [Query(
    "prerequisites", ("prerequisites",),
    help="what to read before a note, foundations first (no model)",
    description="The notes a note builds on: the notes it links to that more notes link to "
                "(the more basic ones), its folder's overview note, and theirs in turn up "
                "to --depth, listed so that each comes after what it needs. Exit 0 some "
                "found, 1 none, 2 no such note.",
    tool="What to read before a note, foundations first (from links and folder overview notes).",
    when="what to read before a note on an unfamiliar subject",
    params=PrerequisitesParams, run=_run, text=_lines, found=lambda a: bool(a.prerequisites),
    lists=("prerequisites",))]
