"""The verdict on a search's ranking: each hit's confidence (kbase_ci.query.evidence), made
to follow the ranking (`follow`: no hit is labelled above a hit ranked before it), how
each is shown, and whether the ranking answers the query at all (`Verdict`, the exit
code). The ranking decides the order and every hit up to the limit is shown; evidence
only says how far to trust each, so any ranker or fusion can sit below this. Precision
first: the query is "not found" only when none of the first hits shows any evidence
beyond the index's background; anything else is answered, each hit labelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from kbase_ci.query import evidence as ev
from kbase_ci.query.filters import has_tag
from kbase_ci.query.queryterms import QueryTerms
from kbase_ci.query.snippets import chunk_text, focus, snippet
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field

if TYPE_CHECKING:
    from kbase_ci.query.hits import ChunkHit, NoteHit


class Searcher(Protocol):
    """What judging needs of a query's searcher (kbase_ci.query.searcher.Searcher)."""

    pool: dict[str, list[ChunkHit]]
    stop: frozenset[str]
    stemmer: str

    def cosine(self, path: str) -> float | None: ...

    def note_terms(self, path: str, terms: list[str]) -> frozenset[str]: ...

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
    confidence: str
    """high, medium, low or none (kbase_ci.query.evidence)."""
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
    confidence: str
    matched: list[str]
    snippet: str | None = json_field(default=None, omit=True)
    explain: Explain | None = json_field(default=None, omit=True)


class Verdict(Record):
    """Whether the ranking answers the query: the command exits 0 when `answered`, else
    1, and shows the ranked hits either way."""

    answered: bool
    confidence: str
    """The best confidence among the first `DEPTH` hits (the filters' hits, before
    `--min-confidence` hides any)."""
    reason: str
    unknown_terms: list[str]
    """Query words no note holds, as written."""
    near_topic: str | None
    """Not answered: the note nearest the topic (the first hit), to read or to say the
    vault stops short of it; None when answered or nothing matched the filters."""


DEPTH = 3
"""Hits the verdict reads, and the window whose best evidence the hits in it share
(`follow`): an answer the ranking puts below the third place is one an agent reading
the first hits would miss."""
ANSWER = "low"
"""The confidence the first hit needs (the best of the first `DEPTH`) for the query to
count as answered."""
JUDGE_MAX = 100
"""Ranked notes judged at most: a hit past the first hundred is no answer worth keeping."""
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


def heading_named(view: QueryView, path: str, q: QueryTerms) -> bool:
    """The query is one of the note's headings, as an agent copies a section title."""
    want = q.text.strip().casefold()
    return bool(want) and any(text.strip().casefold() == want
                              for _, text, _ in view.notes[path].headings)


def follow(own: list[str], depth: int = DEPTH) -> list[str]:
    """The labels shown for hits whose own levels are `own`, in ranking order: in the
    first `depth`, each takes the best level at or below it there (the ranking says a
    hit is at least as good as those below it: evidence found at the third place is the
    first's too), and past them a hit keeps its own level unless the one above it is
    lower. No hit is ever labelled above a hit ranked before it; the first carries the
    best evidence of the first `depth`, which is what the verdict reads."""
    rank = [ev.LEVELS.index(x) for x in own]
    out: list[int] = []
    for i, r in enumerate(rank):
        if i < depth:
            out.append(min(rank[i:depth]))
        else:
            out.append(max(r, out[-1]))
    return [ev.LEVELS[i] for i in out]


@dataclass
class Judged:
    """The hits shown (up to the limit, at the minimum confidence or above: labels follow
    the ranking, so these are a prefix of it), the first `DEPTH` judged (the verdict's),
    and how many were judged and hidden."""

    hits: list[tuple[NoteHit, ev.Evidence]] = field(default_factory=list)
    top: list[tuple[NoteHit, ev.Evidence]] = field(default_factory=list)
    judged: int = 0
    hidden: int = 0


def _name_field(view: QueryView, path: str, q: QueryTerms) -> str:
    return "title" if view.notes[path].title.casefold() == q.text.strip().casefold() \
        else "alias"


def judge(view: QueryView, searcher: Searcher, fused: list[NoteHit], q: QueryTerms,
          named: set[str], tags: list[str], domain: str | None, limit: int,
          min_confidence: str = "none") -> Judged:
    """Judge the ranking in its order, the notes that pass the filters, up to `limit`
    (at least `DEPTH`, at most `JUDGE_MAX`); each hit's confidence is its own level made
    to follow the ranking (`follow`), and the hits below `min_confidence` are left out.
    The ranking decides the order, the evidence only each hit's confidence."""
    background = view.manifest.background
    least = ev.LEVELS.index(min_confidence)
    seen: list[tuple[NoteHit, ev.Evidence]] = []
    for n in fused:
        if len(seen) >= min(JUDGE_MAX, max(limit, DEPTH)):
            break
        if not matches(view, n.path, tags, domain):
            continue
        cosine = n.ranks["semantic"][1] if "semantic" in n.ranks else \
            searcher.cosine(n.path)
        bm25 = n.ranks["bm25"][1] if "bm25" in n.ranks else None
        chunks = searcher.pool.get(n.path, [])
        name = _name_field(view, n.path, q) if n.path in named else None
        held = searcher.note_terms(n.path, q.terms)
        got = ev.judge(chunks, held, q, bm25, cosine, background, name)
        if got.confidence != "high" and len(seen) < HEADING_MAX and \
                heading_named(view, n.path, q):
            got = ev.judge(chunks, held, q, bm25, cosine, background, "heading")
        seen.append((n, got))
    for (_, e), label in zip(seen, follow([e.confidence for _, e in seen]), strict=True):
        e.confidence = label
    out = Judged(top=seen[:DEPTH], judged=len(seen))
    for n, e in seen[:limit]:
        if ev.LEVELS.index(e.confidence) <= least:
            out.hits.append((n, e))
        else:
            out.hidden += 1
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


def record(view: QueryView, n: NoteHit, e: ev.Evidence, q: QueryTerms, concise: bool,
           snippets: bool, explain: bool) -> Hit | ConciseHit:
    info = view.notes[n.path]
    evidence = e.record(q)
    shown = snippet(view, n.section, q) if snippets else None
    why = Explain(**{r: Rank(k, round(v, 4)) for r, (k, v) in n.ranks.items()},
                  name_match=e.named) if explain else None
    if concise:
        return ConciseHit(n.path, info.title, round(n.score, 6), e.confidence,
                          evidence.matched, shown, why)
    section, line = focus(view, n.section, q)
    return Hit(n.path, info.title, round(n.score, 6), e.confidence, section, line,
               [n.section.start_line, n.section.end_line], list(info.tags), info.domain,
               evidence, shown, why)


def decide(q: QueryTerms, judged: Judged, tags: list[str], domain: str | None) -> Verdict:
    """The verdict on a judged ranking: answered when the first hit (the best evidence of
    the first `DEPTH`) has `ANSWER` confidence or better and a hit is shown."""
    unknown = q.words(q.unknown) + [w for w, _ in q.aside]
    first = judged.top[0][1] if judged.top else None
    confidence = first.confidence if first is not None else "none"
    sure = ev.LEVELS.index(confidence) <= ev.LEVELS.index(ANSWER)
    answered = sure and bool(judged.hits)
    near = judged.top[0][0].path if judged.top and not answered else None
    names = q.words(q.names)
    if answered:
        reason = _why(judged)
    elif not judged.judged and (tags or domain):
        reason = "no note matched the filters"
    elif not judged.judged:
        reason = "no note holds any of the query's words"
    elif sure:
        reason = "every hit is below the minimum confidence asked for"
    elif not q.terms:
        reason = "the query has only common words (stopwords), and names no note"
    elif len(unknown) == len(q.terms):
        reason = "no note holds any of the query's words"
    elif names:
        reason = (f"no note mentions {', '.join(names)}, and no top hit comes closer in "
                  "meaning than questions about nothing")
    else:
        reason = ("no top hit holds the query's words together beyond chance, "
                  "or comes closer in meaning than questions about nothing")
    return Verdict(answered, confidence, reason, unknown, near)


def _why(judged: Judged) -> str:
    """What made the query answered: the first hit of the window with evidence of its own."""
    said = {"named": "the query is a note's title, alias or heading",
            "every": "a hit holds every word of the query",
            "words": "a hit's paragraph holds the query's words together beyond chance",
            "most": "a hit holds most of the query's words",
            "meaning": "a hit is closer in meaning than questions about nothing come"}
    for _, e in judged.top:
        got = ev.beyond(e.signals) if e.signals is not None else ("named",)
        if got:
            return said[got[0]]
    return said["words"]
