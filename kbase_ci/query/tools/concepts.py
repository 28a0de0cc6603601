"""`concepts`: the recurring terms of the vault or a domain, documented or not."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.spec import MAX_LIMIT, Domain, Param, Query, Session, none_if_blank
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.concepts import ConceptsAnswer


class ConceptsParams(Record):
    domain: Domain = None
    min_notes: Annotated[int, Param(ge=1, le=MAX_LIMIT, metavar="N",
                                    help="notes a concept must appear in (default: "
                                         "%(default)s)",
                                    tool="Least notes mentioning it.")] = 2
    limit: Annotated[int, Param(ge=1, le=MAX_LIMIT, tool_le=500, metavar="N",
                                help="concepts listed (default: %(default)s)",
                                tool="Concepts to list.")] = 50


def _run(s: Session, p: ConceptsParams) -> ConceptsAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.concepts import concepts_answer

    return concepts_answer(s.view(), domain=none_if_blank(p.domain), min_notes=p.min_notes,
                           limit=p.limit)


def _lines(a: ConceptsAnswer) -> list[str]:
    lines = [f"concepts in >= {a.min_notes} notes: {a.documented} documented, "
             f"{a.undocumented} not"]
    for c in a.concepts:
        where = (f"documented by {c.documented_by.place}" if c.documented_by
                 else "mentioned in " + ", ".join(c.mentioned_in))
        lines.append(f"  {c.name}  ({c.notes} notes)  {where}")
    return lines


QUERIES = [Query(
    "concepts", ("concepts",), help="recurring terms, with the note documenting each",
    description="Terms (backticked identifiers, capitalised names) that recur across "
                "notes, widest spread first, each with the note or section that documents "
                "it or the notes that mention it. Exit 0 found, 1 none, 2 usage error.",
    tool="List the vault's recurring terms, each with the note documenting it or the "
         "notes mentioning it.",
    when="the vocabulary of a vault or domain",
    params=ConceptsParams, run=_run, text=_lines, found=lambda a: bool(a.concepts),
    lists=("concepts",))]
