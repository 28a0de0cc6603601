"""`search`: find notes by meaning and words (hybrid BM25 + vectors)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from kbase_ci.errors import UsageError
from kbase_ci.query.choices import MODES
from kbase_ci.query.tools.spec import Param, Query, Session, Tags, none_if_blank
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.search import SearchAnswer

class SearchParams(Record):
    query: Annotated[str, Param(positional=True, help="what to look for",
                                tool="What you are looking for, in a few words or a "
                                     "question.")]
    mode: Annotated[str, Param(
        choices=MODES, tool="hybrid = words + meaning (default); bm25 = exact words only; "
                            "semantic = meaning only.")] = "hybrid"
    domain: Annotated[str | None, Param(
        help="only notes of this domain",
        tool="Only notes of this domain (the top folder, unless configured).")] = None
    tags: Tags = ()
    limit: Annotated[int, Param(ge=1, tool_le=100, tool="How many notes to return.")] = 5
    snippets: Annotated[bool, Param(
        help="a snippet around the match",
        tool="Add a short text snippet around the match to each hit.")] = False
    concise: Annotated[bool, Param(
        help="paths, titles and scores only",
        tool="Only path, title and score per hit (fewer tokens).")] = False
    explain: Annotated[bool, Param(
        help="each ranker's rank and score",
        tool="Add each ranker's rank and score to each hit (why it ranks there).")] = False
    model: Annotated[Path | None, Param(
        metavar="PATH", help="embedding model folder (default: as the index was built)")
    ] = None


def _prepare(p: SearchParams) -> SearchParams:
    if not p.query.strip():
        raise UsageError("query is empty: say what you are looking for in a few words")
    return SearchParams(p.query, p.mode, none_if_blank(p.domain), p.tags, p.limit, p.snippets,
                        p.concise, p.explain, p.model)


def _run(s: Session, p: SearchParams) -> SearchAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.search import search_answer

    view = s.view()
    embedder, notice = (None, None) if p.mode == "bm25" else s.embedder(view)
    return search_answer(view, p.query, mode=p.mode, limit=p.limit, tags=list(p.tags),
                         domain=p.domain, snippets=p.snippets, concise=p.concise,
                         explain=p.explain, model=p.model or s.model, embedder=embedder,
                         model_notice=notice)


def _empty(p: SearchParams) -> str:
    hints = ["try fewer or different words"]
    if p.tags:
        hints.append("drop the tag filter")
    if p.domain:
        hints.append("drop the domain filter")
    if p.mode == "semantic":
        hints.append("use mode bm25")
    return f"no results for {p.query!r}: " + ", or ".join(hints)


def _lines(a: SearchAnswer) -> list[str]:
    lines = []
    for r in a.results:
        section = getattr(r, "section", None)
        lines.append(f"{r.path}  [{section}]" if section else r.path)
        if r.snippet is not None:
            lines.append(f"    {r.snippet}")
    return lines


QUERIES = [Query(
    "search", ("search",),
    help="search notes (hybrid BM25 + vectors) from the committed index",
    description="Search the vault's index. Exit 0 results, 1 no results, 2 error.",
    tool="Find notes about a topic when you do not know their names: 'I need information "
         "about X'. Ranks whole notes by words and meaning and returns each hit's path, "
         "title, score and best-matching section with its line. Follow up with `read` (one "
         "section is enough) or `context`. Narrow with `domain` or `tags` (a tag also "
         "matches its child tags). Not for a note you already know: use `explore` or "
         "`read` then. Errors when nothing matches, saying what to loosen.",
    when='"I need information about X and don\'t know the note names"; every hit says '
         'how far to trust it (`confidence`), and "not found" is an answer',
    params=SearchParams, run=_run, text=_lines, found=lambda a: bool(a.results),
    prepare=_prepare, empty=_empty)]
