"""`search`: BM25 and vector hits over paragraph chunks, rolled up to notes (a note scores
as its best chunk), and note-level BM25 (`notebm25`), fused by standardised scores
(`fusion`, with the index's per-model weights), each hit judged by its evidence
(kbase_ci.query.evidence): every hit up to the limit is shown with its confidence, and
one verdict (kbase_ci.query.verdict) says whether they answer the query. Chunks of
notes changed since the index are dropped from the committed shards and scored again
from the work tree with the index's own statistics (kbase_ci.query.overlay; vectors
when the model is here).

A query that is exactly a note's title or alias puts that note first: agents often ask
for a note by a name they saw elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from kbase_ci.errors import ModelRefused, UsageError
from kbase_ci.index.ranking import lexical, rankers_of
from kbase_ci.query import misspell, verdict
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.choices import CONFIDENCE, MODES
from kbase_ci.query.filters import check_tags, domain_key, tag_key
from kbase_ci.query.fusion import fuse
from kbase_ci.query.hits import ChunkHit, NoteHit
from kbase_ci.query.notebm25 import ranked_notes
from kbase_ci.query.queryterms import QueryTerms
from kbase_ci.query.searcher import POOL, Searcher
from kbase_ci.query.spec import MAX_LIMIT, Param, Query, Session, Tags, none_if_blank
from kbase_ci.query.verdict import ConciseHit, Hit, Verdict
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field


def _fuse(lists: dict[str, list[ChunkHit]], block: Any) -> list[NoteHit]:
    """Notes by fused score (`fusion.fuse`, with the fusion settings `block`: the index's,
    or any other, as bench/fusion.py tries); each keeps BM25's section when BM25 found it
    (that chunk holds the words asked for)."""
    rankers = rankers_of(block)
    fused = fuse({r: [(h.path, h.score) for h in hits] for r, hits in lists.items()
                  if r in rankers}, rankers)
    if fused and not lists.get("semantic"):  # BM25 alone: over its best, 1.0 for the top
        top = fused[0][1]
        fused = [(p, s / top if top > 0 else 0.0) for p, s in fused]
    out = {path: NoteHit(path, score, ChunkHit(path, (), 1, 1, 0.0)) for path, score in fused}
    for ranker in ("semantic", "bm25"):  # BM25 last: its section wins
        for rank, h in enumerate(lists.get(ranker, []), 1):
            note = out.get(h.path)
            if note is not None:
                note.ranks[ranker] = (rank, h.score)
                note.section = h
    return sorted(out.values(), key=lambda n: (-n.score, n.path))


def ranked(view: QueryView, q: QueryTerms, lists: dict[str, list[ChunkHit]], block: Any
           ) -> tuple[list[NoteHit], list[str]]:
    """Notes in answer order: the rankers' lists fused with the fusion settings `block`,
    then the notes named by the query `q` (title or alias) first; and those names."""
    fused = _fuse(lists, block)
    named = view.named(q.text)
    if named:
        first = {p: i for i, p in enumerate(named)}
        fused.sort(key=lambda n: (n.path not in first, first.get(n.path, 0)))
        have = {n.path for n in fused}
        for p in named:
            if p not in have:
                stub = ChunkHit(p, (), 1, 1, 0.0)
                fused.insert(first[p], NoteHit(p, 0.0, stub, {"name": (1, 1.0)}))
    return fused, named


@dataclass
class Ranking:
    """One query's ranked notes, before any verdict on them."""

    searcher: Searcher
    terms: QueryTerms
    """The query's terms (made once: every ranker and the evidence read them)."""
    fused: list[NoteHit]
    named: list[str]
    """Notes whose title or an alias is the query (they lead the ranking)."""
    notices: list[str]


def rank(view: QueryView, query: str, *, mode: str = "hybrid", model: Path | None = None,
         embedder: Any = None, model_notice: str | None = None) -> Ranking:
    """The notes for `query`, best first: each ranker's chunk hits, fused, with title and
    alias matches first. `embedder`: an already loaded model of this index (a long-lived
    server keeps one); None looks for the index's model, unless `model_notice` says it
    was looked for already and why it is not here."""
    searcher = Searcher(view, model)
    lists: dict[str, list[ChunkHit]] = {}
    notices: list[str] = []
    notice = model_notice
    if mode in ("hybrid", "semantic") and embedder is None and notice is None:
        # The model first: loading it imports numpy, and BM25 then sums its postings
        # with numpy too (at paragraph grain ~50 ms less for a 10k-note vault).
        embedder, notice = searcher.embedder()
    if mode == "semantic" and embedder is None:
        raise UsageError("semantic search needs the index's embedding model: "
                         + (notice or "this index has no vectors") + "; or use --mode bm25")
    q = QueryTerms.of(query, searcher)
    if mode in ("hybrid", "bm25"):
        lists["bm25"] = searcher.bm25(q)
    if mode in ("hybrid", "semantic"):
        if embedder is None:
            notices.append(notice or _no_vectors(view))
        else:
            try:
                lists["semantic"] = searcher.semantic(q, embedder)
            except ModelRefused as exc:  # the model failed on this query (fence)
                if mode == "semantic":
                    raise
                notices.append(f"{exc}: ranked by BM25 only")
    # Without vectors the model-free tier fuses both BM25 lists (`ranking.lexical`).
    block = view.manifest.fusion if "semantic" in lists else lexical()
    if "bm25" in lists and "notes" in rankers_of(block):
        lists["notes"] = [ChunkHit(p, (), 1, 1, score)
                          for p, score in ranked_notes(searcher, q, POOL)]
    fused, named = ranked(view, q, lists, block)
    return Ranking(searcher, q, fused, named, notices)


def _no_vectors(view: QueryView) -> str:
    reason = view.manifest.embeddings.reason
    return "this index has no vectors" + (f" ({reason})" if reason else "") + \
        ": ranked by BM25 only"


class SearchAnswer(Record):
    query: str = json_field(keep=True)
    mode: str = json_field(keep=True)
    results: list[Hit] | list[ConciseHit]
    """The ranked notes up to the limit, each with its confidence (those below
    `min_confidence` left out)."""
    verdict: Verdict = json_field(keep=True)
    hidden: int | None = json_field(omit=True)
    """Hits left out for being below `min_confidence` (None: none were)."""
    notices: list[str] = json_field(keep=True)
    index: IndexInfo


def search_answer(view: QueryView, query: str, *, mode: str = "hybrid", limit: int = 5,
                  tags: list[str] | None = None, domain: str | None = None,
                  snippets: bool = False, concise: bool = False, explain: bool = False,
                  model: Path | None = None, embedder: Any = None,
                  model_notice: str | None = None,
                  min_confidence: str = "none") -> SearchAnswer:
    """The `search` answer: the ranking up to `limit`, hits below `min_confidence` left
    out, and the verdict on it (`limit`, `mode` and `min_confidence` as `SearchParams`
    declares them: a call is checked there, once)."""
    domain = domain_key(view, domain)
    tag_list = [tag_key(t) for t in tags or [] if tag_key(t)]
    r = rank(view, query, mode=mode, model=model, embedder=embedder,
             model_notice=model_notice)
    q = r.terms
    judged = verdict.judge(view, r.searcher, r.fused, q, set(r.named), tag_list, domain,
                           limit, min_confidence)
    if not judged.judged and tag_list:
        check_tags(view, tag_list)  # no such tag anywhere: a usage error, not "none"
    if judged.hits:
        view.texts(n.path for n, _ in judged.hits)  # one git process for all
        verdict.add_fields(view, r.searcher, judged.hits)
    results = [verdict.record(view, n, e, q, concise, snippets, explain)
               for n, e in judged.hits]
    said = verdict.decide(q, judged, tag_list, domain)
    notices = [*r.notices, misspell.notice(q.read)] if q.read else r.notices
    return SearchAnswer(query, mode, results, said,  # type: ignore[arg-type]
                        judged.hidden or None, notices, view.index_info())


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
    return p._replace(domain=none_if_blank(p.domain))


def _run(s: Session, p: SearchParams) -> SearchAnswer:
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
