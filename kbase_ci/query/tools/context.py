"""`context`: the notes an agent should read about a note or a question, ranked by link
distance, backlinks and relevance, cut to a token budget at section boundaries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from kbase_ci.errors import UsageError
from kbase_ci.query.choices import STRATEGIES
from kbase_ci.query.tools.spec import (
    BUDGET,
    MAX_BUDGET,
    MAX_TOKENS,
    Param,
    Query,
    Session,
    none_if_blank,
)
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.bundle import Bundle

class ContextParams(Record):
    note: Annotated[str | None, Param(
        positional=True, metavar="NOTE", help="note path, name or alias to start from",
        tool="")] = None
    query: Annotated[str | None, Param(
        metavar="Q", help="start from the best search hits for Q instead of a note",
        tool="Or start from its search hits.")] = None
    max_tokens: Annotated[int, Param(
        ge=0, le=MAX_BUDGET, metavar="N", help=BUDGET + " (0: no limit; default: %(default)s)",
        tool="")] = MAX_TOKENS
    depth: Annotated[str, Param(
        metavar="quick|standard|deep|N",
        help="quick: 1 hop, 3 notes; standard: 2 hops, 7 notes; deep: 3 hops, 20 notes; N: "
             "N hops (default: %(default)s)",
        tool="quick, standard, deep or hops.")
    ] = "standard"
    strategy: Annotated[str, Param(
        choices=STRATEGIES, enum=False,
        help="breadth: nearest first; importance: best score first (backlinks weigh more); "
             "tags: also follow notes sharing tags (default: %(default)s)",
        tool="breadth, importance or tags.")] = "breadth"
    follow_tags: Annotated[tuple[str, ...], Param(
        metavar="T",
        help="notes with tag T (or below it) join the traversal; repeatable (with "
             "--strategy tags the default is the start notes' tags)",
        tool="")] = ()
    concise: Annotated[bool, Param(
        help="which notes and sections to read, without their text",
        tool="What to read, no text.")] = False


def _prepare(p: ContextParams) -> ContextParams:
    note, query = none_if_blank(p.note), none_if_blank(p.query)
    if note is None and query is None:
        raise UsageError("give a NOTE (to start from it) or a --query (to start from the "
                         "best search hits)", parameter="note")
    if note is not None and query is not None:
        raise UsageError("give a NOTE or --query, not both", parameter="query")
    # 0 is no limit, as for every query command (kbase_ci.query.payload.check_budget)
    return ContextParams(note, query, p.max_tokens or MAX_BUDGET, p.depth.strip(),
                         p.strategy, p.follow_tags, p.concise)


def _run(s: Session, p: ContextParams) -> Bundle:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.context import context_answer

    return context_answer(s.view(), note=p.note, query=p.query, strategy=p.strategy,
                          depth=p.depth, max_tokens=p.max_tokens, follow_tags=p.follow_tags,
                          concise=p.concise, json_budget=s.form == "json")


def _lists(p: ContextParams) -> tuple[str, ...]:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.context import LISTS

    return LISTS


def _lines(a: Bundle) -> list[str]:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.bundle import text_lines

    return text_lines(a)


QUERIES = [Query(
    "context", ("context",),
    help="a token-budgeted reading bundle around a note or a question",
    description="Bidirectional link traversal from NOTE (or from the top search hits for "
                "--query), hubs damped; sections ranked by the query or the links and "
                "packed into --max-tokens "
                "(conservative offline token estimate; see docs/context.md). "
                "Exit 0 notes, 1 nothing found, 2 no such note or bad arguments.",
    tool="The text of the notes most relevant to a note or a query within a token budget, best "
         "sections first. One call for many `read`s.",
    when="the text of several related notes within a token budget, best sections first",
    params=ContextParams, run=_run, text=_lines, found=lambda a: bool(a.notes),
    lists=_lists, prepare=_prepare, budgeted=True)]
