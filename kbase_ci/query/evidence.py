"""Why a search hit is a hit, and how far to trust it: per hit, the query words it holds
(as written), where they are (title, alias, heading, body), its BM25 score on the
index's absolute scale, its cosine, and a `confidence` (high, medium, low) from evidence
that does not depend on how a ranker scales or fuses scores:

- `coverage`: the share of the query's distinct terms found in one chunk of the note;
- `idf_coverage`: the share of the query's IDF mass those terms carry (a query matched
  only on "tree" in a URL covers little of "BKD tree spatial indexing");
- `semantic`: where the hit's cosine falls in the index's background distribution, the
  best cosine that random queries reach in this index (kbase_ci.index.cosinebaseline).

A hit below `low` is not an answer; when none is left, search says "not found" and
shows these near-misses. The thresholds (`RULE`) come from `python -m bench.confidence`
on the shared question sets and absent-topic sets (bench/data/absent-*.jsonl); rerun it
when ranking, tokens or models change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kbase_ci.index.blocks import Background, Tokenizer
from kbase_ci.index.cosinebaseline import percentile
from kbase_ci.query.hits import ChunkHit
from kbase_ci.query.overlay import tokenize
from kbase_ci.typedjson import Record

LEVELS = ("high", "medium", "low")


class Rule(Record):
    """Confidence thresholds (see the module docstring; `python -m bench.confidence`).

    `idf`: the IDF coverage a hit needs for high, medium and low; a query word that no
    note holds weighs `unknown_weight` times the rarest word (that the vault never says
    "Todoist" tells more about a question on Todoist than that one section lacks a rare
    word). Lexical evidence alone (no vectors, or none for this note) needs `alone` for
    low. With vectors, lexical evidence short of `sure` also needs a semantic percentile
    of `veto` (words shared without the meaning), and `rescue` (IDF coverage, semantic
    percentile) makes a hit low, medium from `idf[2]` on: a paraphrase shares few words
    with its answer."""

    idf: tuple[float, float, float] = (0.85, 0.7, 0.5)
    unknown_weight: float = 2.0
    terms: float = 0.25
    alone: float = 0.55
    sure: float = 0.75
    veto: float = 0.9
    rescue: tuple[float, float] = (0.3, 0.99)


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

    def coverage(self, matched: Iterable[str], rule: Rule = RULE) -> float:
        """The share of the query's IDF mass in `matched`, unknown words weighted up."""
        extra = (rule.unknown_weight - 1) * sum(self.idf.get(t, 0.0) for t in self.unknown)
        total = self.mass + extra
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


@dataclass
class Evidence:
    matched: frozenset[str]
    """Query terms (as indexed) the best chunk holds."""
    coverage: float
    idf_coverage: float
    bm25: float | None
    cosine: float | None
    semantic: float | None
    named: str | None
    """`title`, `alias` or `heading` when the query is the note's title, one of its
    aliases or one of its headings (a name an agent copied)."""
    chunk: Any = None
    """The chunk hit the evidence comes from (None: a name match only)."""
    confidence: str | None = None
    fields: list[str] = field(default_factory=list)

    def record(self, q: QueryTerms) -> EvidenceRecord:
        return EvidenceRecord(
            q.words(self.matched), [w for w, t in q.written if t not in self.matched],
            self.fields, None if self.bm25 is None else round(self.bm25, 4),
            None if self.cosine is None else round(self.cosine, 4), round(self.coverage, 3),
            round(self.idf_coverage, 3), None if self.semantic is None else round(self.semantic, 3))


def chunk_terms(hit: ChunkHit, terms: Sequence[str]) -> frozenset[str]:
    """The query terms a chunk holds: a new chunk's own counts, else the shard's postings."""
    if hit.counts is not None:
        return frozenset(t for t in terms if t in hit.counts)
    if hit.where is None:
        return frozenset()
    reader, shard, chunk = hit.where
    model = reader.bm25(shard)
    return frozenset(t for t in terms if model is not None and model.contains(t, chunk))


def level(idf_cov: float, coverage: float, semantic: float | None, named: bool,
          rule: Rule = RULE) -> str | None:
    """The confidence level of this evidence, or None below `low`. `idf_cov` is already
    weighted for unknown words (`QueryTerms.coverage`)."""
    if named:
        return "high"
    words = coverage >= rule.terms
    if semantic is None:
        lexical = words
        floor = rule.alone
    else:
        lexical = words and (semantic >= rule.veto or idf_cov >= rule.sure)
        floor = rule.idf[2]
    rescued = semantic is not None and semantic >= rule.rescue[1]
    if lexical and idf_cov >= rule.idf[0]:
        return "high"
    if (lexical and idf_cov >= rule.idf[1]) or (rescued and idf_cov >= rule.idf[2]):
        return "medium"
    if (lexical and idf_cov >= floor) or (rescued and idf_cov >= rule.rescue[0]):
        return "low"
    return None


def judge(chunks: Sequence[ChunkHit], q: QueryTerms, bm25: float | None,
          cosine: float | None, background: Background | None, named: str | None,
          rule: Rule = RULE) -> Evidence:
    """The evidence of one note from its chunk hits (any ranker's): the chunk holding the
    most of the query's IDF mass (ties: the first found) speaks for it. `bm25` and
    `cosine`: the note's best chunk scores."""
    terms = q.terms
    best: tuple[float, frozenset[str], Any] | None = None
    for hit in chunks:
        have = chunk_terms(hit, terms)
        got = sum(q.idf.get(t, 0.0) for t in have)
        if best is None or got > best[0]:
            best = (got, have, hit)
    matched = best[1] if best is not None else frozenset()
    idf_cov = q.coverage(matched, rule)
    coverage = len(matched) / len(terms) if terms else 0.0
    semantic = percentile(cosine, background) if cosine is not None else None
    ev = Evidence(matched, coverage, idf_cov, bm25, cosine, semantic, named,
                  best[2] if best is not None else None)
    ev.confidence = level(idf_cov, coverage, semantic, named is not None, rule)
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
