"""`summarize`: an extractive summary of a note, or its facts or code."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.spec import Note, Param, Query, Session
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.summary import SummaryAnswer

EXTRACTS = ("summary", "facts", "code-snippets")


class SummarizeParams(Record):
    note: Note
    extract: Annotated[str, Param(choices=EXTRACTS,
                                  help="what to extract (default: %(default)s)",
                                  tool="summary, facts (defining sentences) or "
                                       "code-snippets.")] = "summary"


def _run(s: Session, p: SummarizeParams) -> SummaryAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.summary import summary_answer

    view = s.view()
    return summary_answer(view, view.lookup(p.note), extract=p.extract)


def _lines(a: SummaryAnswer) -> list[str]:
    lines = [f"{a.path} ({a.extract})"]
    if a.lead is not None:
        lines += [f"  {x.line}: {x.text}" for x in a.lead]
    if a.outline:
        lines.append("outline:")
        lines += [f"  {'  ' * (h.level - 1)}{h.text} (line {h.line})" for h in a.outline]
    if a.key_sentences:
        lines.append("key sentences:")
        lines += [f"  {x.line}: {x.text}" for x in a.key_sentences]
    for f in a.facts or []:
        lines.append(f"  {f.line}: [{f.term}] {f.text}")
    for c in a.code_snippets or []:
        lines += [f"  {c.line}: ```{c.language}  ({c.heading or 'top'})", c.code, "  ```"]
    return lines


def _found(a: SummaryAnswer) -> bool:
    return bool(a.lead or a.outline or a.key_sentences or a.facts or a.code_snippets)


QUERIES = [Query(
    "summarize", ("summarize",), help="an extractive summary of a note, its facts or code",
    description="Lead sentences, section outline and key sentences (by the note's own term "
                "weights); --extract facts: defining sentences with their headings; "
                "--extract code-snippets: fenced code with language and heading. No "
                "model. Exit 0 found, 1 nothing to extract, 2 no such note.",
    tool="Summarize a note without reading it all: lead, outline, key sentences; or its "
         "facts or code.",
    when="the gist of a long note, its definitions or its code",
    params=SummarizeParams, run=_run, text=_lines, found=_found,
    lists=("lead", "facts", "code_snippets", "key_sentences", "outline"))]
