"""Why a search hit is a hit, and how far to trust it: per hit, the query words it holds
(as written), where they are (title, alias, heading, body), its BM25 score on the
index's absolute scale, its cosine, and a `confidence` (high, medium, low, none) from
evidence that does not depend on how a ranker scales or fuses scores:

- `coverage`: the share of the query's distinct terms the note holds (any of its
  paragraphs: "502 or 504" answered in two paragraphs is answered);
- `idf_coverage`: the share of the query's IDF mass those terms carry (a query matched
  only on "tree" in a URL covers little of "BKD tree spatial indexing");
- `semantic`, `margin`: where the hit's cosine falls in the index's background, the best
  cosine that null questions reach in this index (kbase_ci.index.cosinebaseline): its
  percentile, and its margin (0 at the median, 1 at the maximum).

Every hit is shown with its level; the verdict (kbase_ci.query.verdict) reads the first
ones. The thresholds (`RULE`) come from `python -m bench.confidence`, fitted leaving one
vault out on the shared natural and absent question sets; rerun it when ranking, tokens
or models change.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kbase_ci.index.blocks import Background, Tokenizer
from kbase_ci.index.cosinebaseline import margin, percentile
from kbase_ci.query.choices import CONFIDENCE
from kbase_ci.query.hits import ChunkHit
from kbase_ci.query.overlay import tokenize
from kbase_ci.typedjson import Record

LEVELS = CONFIDENCE
"""A hit's confidence, best first; `none`: the evidence does not make it an answer (it
is shown all the same: the ranking is never cut)."""


class Rule(Record):
    """Confidence thresholds (see the module docstring), fitted by `python -m
    bench.confidence` leaving one vault out (docs/query.md#confidence).

    `idf`: the IDF coverage (over the whole note) a hit needs for high, medium and low;
    under `terms` of the query's terms it is never enough. Without vectors (or none for
    this note) low needs `alone`. With vectors, words short of `sure` also need a
    semantic margin of `veto` (shared words without the meaning), and `rescue` (IDF
    coverage, semantic margin) makes a hit low, medium from `idf[2]` on: a paraphrase
    shares few words with its answer. The margin is the hit's cosine against the
    index's own background of null questions (cosinebaseline.margin: 0 at its median,
    1 at its maximum)."""

    idf: tuple[float, float, float] = (0.9, 0.8, 0.7)
    terms: float = 0.25
    alone: float = 0.6
    sure: float = 0.75
    veto: float = 0.5
    rescue: tuple[float, float] = (0.3, 1.0)


RULE = Rule()


class QueryTerms(Record):
    written: tuple[tuple[str, str], ...]
    """(as written, term) per distinct term, in query order."""
    idf: dict[str, float]
    """Each term's IDF over the whole index (overlay included)."""
    unknown: frozenset[str] = frozenset()
    """Terms no chunk holds."""

    @property
    def terms(self) -> list[str]:
        return [t for _, t in self.written]

    @property
    def mass(self) -> float:
        return sum(self.idf.get(t, 0.0) for t in self.terms)

    def coverage(self, matched: Iterable[str]) -> float:
        """The share of the query's IDF mass in `matched` (a word no note holds weighs as
        the rarest, once: paraphrases use words the vault never says)."""
        total = self.mass
        return sum(self.idf.get(t, 0.0) for t in set(matched)) / total if total > 0 else 0.0

    def words(self, terms: Iterable[str]) -> list[str]:
        have = set(terms)
        return [w for w, t in self.written if t in have]


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
    confidence: str = "none"
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


def level(idf_cov: float, coverage: float, margin: float | None, named: bool,
          rule: Rule = RULE) -> str:
    """The confidence level of this evidence (`none` below `low`); `margin`: the
    cosine's semantic margin (None without vectors)."""
    if named:
        return "high"
    words = coverage >= rule.terms
    if margin is None:
        lexical = words
        floor = rule.alone
    else:
        lexical = words and (margin >= rule.veto or idf_cov >= rule.sure)
        floor = rule.idf[2]
    rescued = margin is not None and margin >= rule.rescue[1] and idf_cov >= rule.rescue[0]
    if lexical and idf_cov >= rule.idf[0]:
        return "high"
    if (lexical and idf_cov >= rule.idf[1]) or (rescued and idf_cov >= rule.idf[2]):
        return "medium"
    if (lexical and idf_cov >= floor) or rescued:
        return "low"
    return "none"


def lexical_answer(e: Evidence, rule: Rule = RULE) -> bool:
    """The hit's words alone make it at least `low` (not the semantic rescue)."""
    words_only = rule._replace(rescue=(math.inf, math.inf))
    return level(e.idf_coverage, e.coverage, e.margin, False, words_only) != "none"


def judge(chunks: Sequence[ChunkHit], note_terms: frozenset[str], q: QueryTerms,
          bm25: float | None, cosine: float | None, background: Background | None,
          named: str | None, rule: Rule = RULE) -> Evidence:
    """The evidence of one note: `note_terms`, the query terms it holds anywhere, give
    the coverage; of its chunk hits (any ranker's) the one holding the most of the
    query's IDF mass (ties: the first found) is the section shown. `bm25` and `cosine`:
    the note's best chunk scores."""
    terms = q.terms
    best: tuple[float, Any] | None = None
    for hit in chunks:
        got = sum(q.idf.get(t, 0.0) for t in chunk_terms(hit, terms))
        if best is None or got > best[0]:
            best = (got, hit)
    matched = note_terms
    idf_cov = q.coverage(matched)
    coverage = len(matched) / len(terms) if terms else 0.0
    semantic = percentile(cosine, background) if cosine is not None else None
    edge = margin(cosine, background) if cosine is not None else None
    ev = Evidence(matched, coverage, idf_cov, bm25, cosine, semantic, edge, named,
                  best[1] if best is not None else None)
    ev.confidence = level(idf_cov, coverage, edge, named is not None, rule)
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
