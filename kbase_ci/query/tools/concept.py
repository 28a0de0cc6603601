"""`concept "X"`: one term's definition and the notes discussing it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from kbase_ci.errors import UsageError
from kbase_ci.query.tools.spec import MAX_LIMIT, Param, Query, Session
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.concepts import ConceptAnswer


class ConceptParams(Record):
    name: Annotated[str, Param(positional=True, metavar="X",
                               tool="The term (`Change Data Capture`, `task.due`).")]
    definition: Annotated[bool, Param(help="only its definition",
                                      tool="Only its definition.")] = False
    notes: Annotated[bool, Param(help="only where it is discussed",
                                 tool="Only where it is discussed.")] = False
    limit: Annotated[int, Param(ge=1, le=MAX_LIMIT, tool_le=100, metavar="N",
                                help="notes listed (default: %(default)s)",
                                tool="Notes to list.")] = 20


def _prepare(p: ConceptParams) -> ConceptParams:
    if not p.name.strip():
        raise UsageError("name a concept: kbase concept \"Change Data Capture\"")
    return p


def _run(s: Session, p: ConceptParams) -> ConceptAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.concepts import concept_answer

    both = p.definition == p.notes  # neither asked (or both): both
    return concept_answer(s.view(), p.name, definition=both or p.definition,
                          notes=both or p.notes, limit=p.limit)


def _lines(a: ConceptAnswer) -> list[str]:
    doc = a.documented_by
    lines = [f"{a.concept}: documented by " + (doc.place if doc else "no note")
             + f", discussed in {a.notes} other note" + ("" if a.notes == 1 else "s")]
    if a.definition is not None:
        lines.append("definition:" if a.definition else "definition: none found")
        lines += [f"  {d.path}:{d.line}: {d.text}" for d in a.definition]
    if a.discussed is not None:
        lines.append("discussed in:")
        lines += [f"  {d.path}:{d.line} ({d.mentions}x): {d.snippet}" for d in a.discussed]
    return lines


QUERIES = [Query(
    "concept", ("concept",), help="a term's definition and the notes discussing it",
    description="The defining sentences of the note or section documenting X (else those "
                "of the notes mentioning it), and the notes discussing X, most mentions "
                "first, with line and snippet. Exit 0 found, 1 nothing, 2 usage error.",
    tool="Define a term from the notes (its defining sentences, located) and list the notes "
         "discussing it.",
    when="what a term means here, and where it is used",
    params=ConceptParams, run=_run, text=_lines, prepare=_prepare,
    found=lambda a: bool(a.definition or a.discussed or a.documented_by),
    lists=("definition", "discussed"))]
