"""`search`: find notes by meaning and words (hybrid BM25 + vectors)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from kbase_ci.errors import UsageError
from kbase_ci.query.choices import CONFIDENCE, MODES
from kbase_ci.query.tools.spec import MAX_LIMIT, Param, Query, Session, Tags, none_if_blank
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.search import SearchAnswer

class SearchParams(Record):
    query: Annotated[str, Param(positional=True, help="what to look for",
                                tool="Words or a question.")]
    mode: Annotated[str, Param(
        choices=MODES, tool="")] = "hybrid"
    domain: Annotated[str | None, Param(
        help="only notes of this domain",
        tool="")] = None
    tags: Tags = ()
    limit: Annotated[int, Param(ge=1, le=MAX_LIMIT, tool_le=100,
                                tool="")] = 5
    snippets: Annotated[bool, Param(
        help="a snippet around the match",
        tool="Add text snippets.")] = False
    concise: Annotated[bool, Param(
        help="paths, titles and scores only",
        tool="Path, title, score only.")] = False
    explain: Annotated[bool, Param(
        help="each ranker's rank and score",
        tool="Add each ranker's score.")] = False
    model: Annotated[Path | None, Param(
        metavar="PATH", help="embedding model folder (default: as the index was built)")
    ] = None
    min_confidence: Annotated[str, Param(
        choices=CONFIDENCE, metavar="LEVEL",
        help="leave out hits below this confidence (default: %(default)s, every hit shown)",
        tool="Lowest confidence shown.")] = "none"


def _prepare(p: SearchParams) -> SearchParams:
    if not p.query.strip():
        raise UsageError("query is empty: say what you are looking for in a few words",
                         parameter="query")
    return SearchParams(p.query, p.mode, none_if_blank(p.domain), p.tags, p.limit, p.snippets,
                        p.concise, p.explain, p.model, p.min_confidence)


def _run(s: Session, p: SearchParams) -> SearchAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.search import search_answer

    view = s.view()
    embedder, notice = (None, None) if p.mode == "bm25" else s.embedder(view)
    return search_answer(view, p.query, mode=p.mode, limit=p.limit, tags=list(p.tags),
                         domain=p.domain, snippets=p.snippets, concise=p.concise,
                         explain=p.explain, model=p.model or s.model, embedder=embedder,
                         model_notice=notice, min_confidence=p.min_confidence)


def _lines(a: SearchAnswer) -> list[str]:
    v = a.verdict
    # First what the ranking lacks ("BM25 only: no model (why; fix)"): never silent.
    lines = [*a.notices] + ([] if v.answered else [f"not answered: {v.reason}"])
    for r in a.results:
        section = getattr(r, "section", None)
        where = f"{r.path}  [{section}]" if section else r.path
        lines.append(f"{where}  ({r.confidence})")
        if r.snippet is not None:
            lines.append(f"    {r.snippet}")
    return lines


QUERIES = [Query(
    "search", ("search",),
    help="search notes (hybrid BM25 + vectors) from the committed index",
    description="Search the vault's index: the ranked notes up to --limit, each with its "
                "confidence, and a verdict on whether they answer the query. Exit 0 "
                "answered, 1 not answered (the hits are printed either way), 2 error.",
    tool="Find notes on a topic when you do not know their names; each hit has a `confidence`, "
         "and `verdict.answered` says if any answers it.",
    when='"I need information about X and don\'t know the note names"; every hit says '
         'how far to trust it (`confidence`), and the `verdict` whether the vault answers',
    params=SearchParams, run=_run, text=_lines, found=lambda a: a.verdict.answered,
    lists=("results",),
    prepare=_prepare)]
