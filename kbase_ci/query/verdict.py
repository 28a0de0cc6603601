"""The verdict on a search's ranking: which hits are answers (at least `low` confidence,
kbase_ci.query.evidence), how each is shown, and what a "not found" answer says: what
was tried and the nearest misses. The ranking decides the order; evidence only what is
kept, so any ranker or fusion can sit below this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from kbase_ci.query import evidence as ev
from kbase_ci.query.filters import has_tag
from kbase_ci.query.snippets import chunk_text, focus, snippet
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field

if TYPE_CHECKING:
    from kbase_ci.query.hits import ChunkHit, NoteHit


class Searcher(Protocol):
    """What judging needs of a query's searcher (kbase_ci.query.search.Searcher)."""

    pool: dict[str, list[ChunkHit]]
    stop: frozenset[str]
    stemmer: str

    def cosine(self, path: str) -> float | None: ...

    def unknown(self, terms: list[str]) -> list[str]: ...

class Rank(Record):
    rank: int
    score: float


class Explain(Record):
    """Each ranker's rank and score for a hit (`--explain`); `name`: its title or an
    alias is the query."""

    semantic: Rank | None = json_field(default=None, omit=True)
    bm25: Rank | None = json_field(default=None, omit=True)
    name: Rank | None = json_field(default=None, omit=True)
    name_match: str | None = None


class Hit(Record):
    path: str
    title: str
    score: float
    confidence: str | None
    section: str | None
    """The heading path of the part that matched."""
    line: int
    lines: list[int]
    tags: list[str]
    domain: str
    evidence: ev.EvidenceRecord
    snippet: str | None = json_field(default=None, omit=True)
    explain: Explain | None = json_field(default=None, omit=True)


class ConciseHit(Record):
    """A hit with path, title, score, confidence and the words it holds (`--concise`)."""

    path: str
    title: str
    score: float
    confidence: str | None
    matched: list[str]
    snippet: str | None = json_field(default=None, omit=True)
    explain: Explain | None = json_field(default=None, omit=True)


class NearMiss(Record):
    path: str
    title: str
    confidence: None
    evidence: ev.EvidenceRecord


class ConciseNearMiss(Record):
    path: str
    title: str
    confidence: None
    matched: list[str]


class Filters(Record):
    tags: list[str]
    domain: str | None


class Tried(Record):
    terms: list[str]
    unknown_terms: list[str]
    rankers: list[str]
    filters: Filters
    notes_judged: int
    notes: int


class NotFound(Record):
    """What was tried, and the closest hits that were not good enough."""

    reason: str
    tried: Tried
    near_misses: list[NearMiss] | list[ConciseNearMiss]


NEAR_MISSES = 3
"""Hits below `low` shown with a "not found" answer."""


JUDGE_MAX = 100
"""Ranked notes judged at most: a hit past the first hundred is no answer worth keeping,
and an absent topic on a 10k-note vault can rank thousands of notes by common words."""
HEADING_MAX = 20
"""Notes, from the first judged, whose headings are compared with the query."""


def matches(view: QueryView, path: str, tags: list[str], domain: str | None) -> bool:
    if not tags and domain is None:
        return True  # no filter: no note row to read
    info = view.notes.get(path)
    if info is None:
        return False
    if domain is not None and info.domain != domain:
        return False
    return all(has_tag(info.tags, want) for want in tags)


def heading_named(view: QueryView, path: str, query: str) -> bool:
    """The query is one of the note's headings, as an agent copies a section title."""
    want = query.strip().casefold()
    return bool(want) and any(text.strip().casefold() == want
                              for _, text, _ in view.notes[path].headings)


@dataclass
class Judged:
    """The hits that are answers (at least `low` confidence) and the best misses."""

    hits: list[tuple[NoteHit, ev.Evidence]] = field(default_factory=list)
    misses: list[tuple[NoteHit, ev.Evidence]] = field(default_factory=list)
    judged: int = 0


def _name_field(view: QueryView, path: str, query: str) -> str:
    return "title" if view.notes[path].title.casefold() == query.strip().casefold() \
        else "alias"


def judge(view: QueryView, searcher: Searcher, fused: list[NoteHit], q: ev.QueryTerms,
          query: str, named: set[str], tags: list[str], domain: str | None, limit: int,
          floor: bool) -> Judged:
    """Walk the ranking in its order, judging each note that passes the filters, until
    `limit` answers (or `JUDGE_MAX` notes); the ranking decides the order, the evidence
    only what is kept."""
    background = view.manifest.background
    out = Judged()
    for n in fused:
        if out.judged >= JUDGE_MAX:
            break
        if not matches(view, n.path, tags, domain):
            continue
        cosine = n.ranks["semantic"][1] if "semantic" in n.ranks else \
            searcher.cosine(n.path)
        bm25 = n.ranks["bm25"][1] if "bm25" in n.ranks else None
        chunks = searcher.pool.get(n.path, [])
        name = _name_field(view, n.path, query) if n.path in named else None
        got = ev.judge(chunks, q, bm25, cosine, background, name)
        if got.confidence is None and out.judged < HEADING_MAX and \
                heading_named(view, n.path, query):
            got = ev.judge(chunks, q, bm25, cosine, background, "heading")
        out.judged += 1
        if got.confidence is None and floor:
            if len(out.misses) < NEAR_MISSES:
                out.misses.append((n, got))
            continue
        out.hits.append((n, got))
        if len(out.hits) >= limit:
            break
    return out


def add_fields(view: QueryView, searcher: Searcher,
               judged: list[tuple[NoteHit, ev.Evidence]]) -> None:
    """Which fields the matched terms are in, for the hits shown (their texts are read)."""
    for n, e in judged:
        info = view.notes[n.path]
        heads: list[str] = list(e.chunk.heading_path) if e.chunk is not None else []
        lines = chunk_text(view, e.chunk).splitlines() if e.chunk is not None else []
        # A chunk packs short sections: their heading lines are headings too.
        heads += [ln.lstrip(" #") for ln in lines if ln.lstrip().startswith("#")]
        body = "\n".join(ln for ln in lines if not ln.lstrip().startswith("#"))
        e.fields = ev.note_fields(e, info.title, info.aliases, heads, body, searcher.stop,
                                  searcher.stemmer)


def record(view: QueryView, n: NoteHit, e: ev.Evidence, q: ev.QueryTerms, query: str,
           concise: bool, snippets: bool, explain: bool) -> Hit | ConciseHit:
    info = view.notes[n.path]
    evidence = e.record(q)
    shown = snippet(view, n.section, query) if snippets else None
    why = Explain(**{r: Rank(k, round(v, 4)) for r, (k, v) in n.ranks.items()},
                  name_match=e.named) if explain else None
    if concise:
        return ConciseHit(n.path, info.title, round(n.score, 6), e.confidence,
                          evidence.matched, shown, why)
    section, line = focus(view, n.section, query)
    return Hit(n.path, info.title, round(n.score, 6), e.confidence, section, line,
               [n.section.start_line, n.section.end_line], list(info.tags), info.domain,
               evidence, shown, why)


def not_found(view: QueryView, searcher: Searcher, q: ev.QueryTerms,
              rankers: list[str], judged: Judged, tags: list[str],
              domain: str | None, concise: bool) -> NotFound:
    """What was tried, and the closest hits that were not good enough."""
    unknown = q.words(searcher.unknown(q.terms))
    near: list[NearMiss] | list[ConciseNearMiss] = (
        [ConciseNearMiss(n.path, view.notes[n.path].title, None, q.words(e.matched))
         for n, e in judged.misses] if concise else
        [NearMiss(n.path, view.notes[n.path].title, None, e.record(q))
         for n, e in judged.misses])
    if not judged.judged and (tags or domain):
        reason = "no note matched the filters"
    elif not q.terms:
        reason = "the query has only common words (stopwords), and names no note"
    elif len(unknown) == len(q.terms):
        reason = "no note holds any of the query's words"
    else:
        reason = "no note holds enough of the query"
    return NotFound(reason, Tried([w for w, _ in q.written], unknown, rankers,
                                  Filters(tags, domain), judged.judged, len(view.notes)), near)
