"""Why a search hit is a hit, and how far to trust it: per hit, the query words it holds
(as written), where they are (title, alias, heading, body), its BM25 score on the
index's absolute scale, its cosine, and a `confidence` (high, medium, low, none) from
evidence that does not depend on how a ranker scales or fuses scores. Each measure is
read against the index's own background, so no threshold is fitted to a vault:

- words: the query's content terms (its frame words left out: kbase_ci.query.
  framewords) the note holds anywhere (`coverage`, and `idf_coverage`, their share of
  the query's IDF mass);
- chance: the IDF mass of the query terms the note's best paragraph holds together,
  in units of `QueryTerms.rare` (the IDF of a term found in one paragraph of the index):
  above 1, those words stand together more rarely than chance would put them in any
  paragraph of this index;
- meaning: `semantic`, `margin`: where the hit's cosine falls in the index's background,
  the best cosine that null questions reach in this index (kbase_ci.index.
  cosinebaseline): its percentile, and its margin (0 at the median, 1 at the maximum:
  above 1, closer than any question about nothing came).

Query words no paragraph holds raise the bars (a name the index never saw, the most: it
is the topic). Every hit is shown with its level; the verdict (kbase_ci.query.verdict)
makes the levels follow the ranking and reads the first ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kbase_ci.index.blocks import Background, Tokenizer
from kbase_ci.index.cosinebaseline import margin, percentile
from kbase_ci.query.choices import CONFIDENCE
from kbase_ci.query.hits import ChunkHit
from kbase_ci.query.overlay import tokenize
from kbase_ci.query.queryterms import QueryTerms
from kbase_ci.typedjson import Record

LEVELS = CONFIDENCE
"""A hit's confidence, best first; `none`: the evidence does not make it an answer (it
is shown all the same: the ranking is never cut)."""


class Rule(Record):
    """What makes a hit evidence that the vault covers the query (docs/query.md#confidence).
    The bars sit on scales each index carries itself: `chance` in units of
    `QueryTerms.rare` (the IDF of a term in one paragraph), `null` on the margin of the
    index's null questions (1: the best any of them reached). Each query word no
    paragraph holds adds `unknown` to the words' bar, and each such word written as a name
    (`QueryTerms.names`) adds `name` to both bars and closes the `majority` path: the
    question is about something the vault never mentions. `bench.confidence` measures
    them leaving one vault out."""

    chance: float = 1.0
    unknown: float = 0.5
    name: float = 1.0
    null: float = 1.0
    majority: int = 3
    """A note holding this many of the query's content terms, and at least half of them."""
    medium: float = 0.75
    """IDF coverage from which evidence of one measure is `medium` (`level`)."""


RULE = Rule()


class EvidenceRecord(Record):
    """Why a hit is a hit, as an answer shows it (see the module docstring)."""

    matched: list[str]
    """Query words the hit holds, as written."""
    missing: list[str]
    fields: list[str]
    bm25: float | None
    cosine: float | None
    coverage: float
    idf_coverage: float
    semantic: float | None
    margin: float | None


@dataclass(frozen=True)
class Signals:
    """What a hit's level is read from (`level`), as numbers: `bench.confidence` keeps
    them per question to measure other rules on."""

    named: bool
    """The query is the note's title, an alias or a heading."""
    held: int
    """Content terms the note holds."""
    coverage: float
    idf_coverage: float
    chance: float
    """The IDF mass of the query terms its best paragraph holds, over `QueryTerms.rare`."""
    margin: float | None
    unknown: int
    """Content terms no chunk holds, names included."""
    names: int
    together: int = 0
    """Content terms its best paragraph holds (the ones `chance` adds up)."""
    terms: int = 0
    """The query's content terms."""


def beyond(s: Signals, rule: Rule = RULE) -> tuple[str, ...]:
    """Which measures put this evidence beyond the index's background (see `Rule`):
    `named` (the query is the note's title, an alias or a heading), `every` (every content
    term), `words` (its best paragraph's words beyond chance), `most` (most of the query's
    words), `meaning` (beyond every null question)."""
    plain = s.unknown - s.names
    out = []
    if s.named:
        out.append("named")
    if s.coverage >= 1.0:
        out.append("every")
    if s.chance > rule.chance + rule.unknown * plain + rule.name * s.names:
        out.append("words")
    if not s.names and s.held >= rule.majority and s.coverage >= 0.5:
        out.append("most")
    if s.margin is not None and s.margin > rule.null + rule.name * s.names:
        out.append("meaning")
    return tuple(out)


def level(s: Signals, rule: Rule = RULE) -> str:
    """The confidence of this evidence, from how many measures put it beyond the index's
    background (`beyond`): `none` for no measure; `high` for the note named, three
    measures, or its paragraph's words beyond chance with the meaning or every word too;
    `medium` for two, or `rule.medium` of the query's IDF mass; `low` for one. Measured
    on the shared sets, the share of hits that answer falls with each level
    (docs/query.md#confidence)."""
    got = set(beyond(s, rule))
    if not got:
        return "none"
    if "named" in got or len(got) >= 3 or ("words" in got and got & {"meaning", "every"}):
        return "high"
    return "medium" if len(got) == 2 or s.idf_coverage >= rule.medium else "low"


@dataclass
class Evidence:
    matched: frozenset[str]
    """Query terms (as indexed) the note holds."""
    coverage: float
    idf_coverage: float
    bm25: float | None
    cosine: float | None
    semantic: float | None
    margin: float | None
    named: str | None
    """`title`, `alias` or `heading` when the query is the note's title, one of its
    aliases or one of its headings (a name an agent copied)."""
    chunk: Any = None
    """The chunk hit holding most of the query (None: a name match only): the section
    shown."""
    signals: Signals | None = None
    confidence: str = "none"
    """Its own level (`level`); the answer shows it made to follow the ranking
    (kbase_ci.query.verdict.follow)."""
    fields: list[str] = field(default_factory=list)

    def record(self, q: QueryTerms) -> EvidenceRecord:
        return EvidenceRecord(
            q.words(self.matched), [w for w, t in q.written if t not in self.matched],
            self.fields, None if self.bm25 is None else round(self.bm25, 4),
            None if self.cosine is None else round(self.cosine, 4), round(self.coverage, 3),
            round(self.idf_coverage, 3), _round(self.semantic), _round(self.margin))


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


def chunk_terms(hit: ChunkHit, terms: Sequence[str]) -> frozenset[str]:
    """The query terms a chunk holds: a new chunk's own counts, else the shard's postings."""
    if hit.counts is not None:
        return frozenset(t for t in terms if t in hit.counts)
    if hit.where is None:
        return frozenset()
    reader, shard, chunk = hit.where
    model = reader.bm25(shard)
    return frozenset(t for t in terms if model is not None and model.contains(t, chunk))


def judge(chunks: Sequence[ChunkHit], note_terms: frozenset[str], q: QueryTerms,
          bm25: float | None, cosine: float | None, background: Background | None,
          named: str | None, rule: Rule = RULE) -> Evidence:
    """The evidence of one note: `note_terms`, the query terms it holds anywhere, give
    the coverage; of its chunk hits (any ranker's) the one holding the most of the
    query's IDF mass (ties: the first found) is the section shown, and that mass its
    chance. `bm25` and `cosine`: the note's best chunk scores."""
    terms = q.terms
    best: tuple[float, Any, int] | None = None
    for hit in chunks:
        held = chunk_terms(hit, terms)
        got = sum(q.idf.get(t, 0.0) for t in held)
        if best is None or got > best[0]:
            best = (got, hit, len(held))
    matched = note_terms
    idf_cov = q.coverage(matched)
    coverage = len(matched) / len(terms) if terms else 0.0
    semantic = percentile(cosine, background) if cosine is not None else None
    edge = margin(cosine, background) if cosine is not None else None
    chance = best[0] / q.rare if best is not None and q.rare > 0 else 0.0
    signals = Signals(named is not None, len(matched), coverage, idf_cov, chance, edge,
                      len(q.unknown), len(q.names), best[2] if best is not None else 0,
                      len(terms))
    ev = Evidence(matched, coverage, idf_cov, bm25, cosine, semantic, edge, named,
                  best[1] if best is not None else None, signals)
    ev.confidence = level(signals, rule)
    return ev


def note_fields(ev: Evidence, title: str, aliases: Sequence[str], headings: Sequence[str],
                body: str, stop: frozenset[str], stemmer: str) -> list[str]:
    """Where the matched terms are: `title`, `alias`, `heading` (the chunk's heading path
    and heading lines), `body` (its other lines); a name the query is counts whatever
    its words."""
    def has(text: str) -> bool:
        return bool(ev.matched.intersection(tokenize(text, stop, stemmer)))

    found = {"title": ev.named == "title" or has(title),
             "alias": ev.named == "alias" or any(has(a) for a in aliases),
             "heading": ev.named == "heading" or any(has(h) for h in headings),
             "body": has(body)}
    return [name for name, yes in found.items() if yes]


def stopword_set(tokenizer: Tokenizer) -> frozenset[str]:
    """The index's stopwords (the manifest's `tokenizer` block)."""
    return frozenset(tokenizer.stopwords)
