"""`notes`: notes by tag (hierarchies respected) and domain."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.spec import Domain, Param, Query, Session, Tags, none_if_blank
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.tagtree import NotesAnswer


class NotesParams(Record):
    tags: Tags = ()
    any_tag: Annotated[bool, Param(
        flag="--any", help="notes with any of the tags (default: all of them)",
        tool="Any of the tags, not all.")] = False
    domain: Domain = None


def _run(s: Session, p: NotesParams) -> NotesAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.tagtree import notes_answer

    return notes_answer(s.view(), tags=list(p.tags), any_tag=p.any_tag,
                        domain=none_if_blank(p.domain))


QUERIES = [Query(
    "notes", ("notes",), help="notes with given tags and domain",
    description="Notes having every --tag (a tag matches the tags below it: rust matches "
                "rust/async), or any of them with --any. Exit 0 notes found, 1 none, 2 "
                "error.",
    tool="List notes by tag and domain (which notes are about rust?); `search` finds a topic in "
         "the text.",
    when="notes by tag and domain",
    params=NotesParams, run=_run,
    text=lambda a: [f"{n.path}  " + " ".join(f"#{t}" for t in n.tags) for n in a.notes],
    found=lambda a: bool(a.notes), lists=("notes",))]
