"""BM25 for notes changed since the index, scored with the index's own corpus statistics,
so a note written after the index ranks where a rebuild would put it.

A rebuild would drop the changed and deleted notes' old chunks and add the new ones:
the chunk count and each query term's document frequency change by what was dropped
and added (`Overlay.extra_docs`, `extra_df`), which gives the IDF every hit is scored
with. A new chunk's term-frequency part is computed as the shard it would join computes
it, with that shard's mean chunk length (stored in its `bm25/stats.json`) corrected for
the chunks that come and go, and rounded to the byte the index stores, so an unchanged
text scores exactly as its indexed twin. (A rebuild would also move that shard's mean
length for its other chunks by as little; that is the one difference left.)

Before this, changed notes went into a small BM25 index of their own: its IDF came from
a handful of chunks, and a note committed after the index ranked last for its own words
(31 of 31 in the issue's example).
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kbase_ci.index import bm25 as bm25mod
from kbase_ci.index import tokens
from kbase_ci.index.shards import bucket
from kbase_ci.typedjson import Record

if TYPE_CHECKING:  # chunks (and the parser's records) load only for notes changed since
    from kbase_ci.index.chunks import Chunk


class FreshChunk(Record):
    """A chunk of a note changed since the index, tokenized as the index tokenizes."""

    chunk: Chunk
    counts: Counter[str]
    """Term -> frequency in the indexed text (title and aliases, headings, body)."""
    length: int
    """Tokens in the indexed text: BM25's document length."""
    shard: str
    """The shard a rebuild would put the note in; `+DOMAIN` for a domain the index lacks
    (a rebuild makes a shard of just the new notes)."""


def tokenize(text: str, stop: frozenset[str], stemmer: str) -> list[str]:
    """The terms bm25s's tokenizer gives `text` with kbase's splitter: stopwords
    dropped, then stemmed (kbase_ci.index.tokens.make_tokenizer)."""
    stem = tokens.stemmer(stemmer)
    return [stem(t) for t in tokens.split(text) if t not in stop]


def shard_for(path: str, domain: str, groups: Sequence[Sequence[str]]) -> str:
    """The shard of `domain` a note at `path` joins: the domain's only shard, or, when it
    is split into `.KofN` parts, the part its path hashes to (kbase_ci.index.shards);
    `+DOMAIN` when the index has no shard of that domain (or not that part)."""
    ids = sorted({g[0] for g in groups if g[1] == domain})
    if len(ids) == 1:
        return ids[0]
    parts = ids[0].rsplit(".", 1)[-1].partition("of")[2] if ids else ""
    if not parts.isdigit():
        return f"+{domain}"
    want = f"{ids[0].rsplit('.', 1)[0]}.{bucket(path, int(parts)) + 1}of{parts}"
    return want if want in ids else f"+{domain}"


class Overlay:
    """The changed notes' chunks against the index's shards (state: the dropped chunk
    ranges per shard, the new chunks, and each shard's mean length, read when asked)."""

    def __init__(self, reader: Any, models: dict[str, Any], dropped: dict[str, list[int]],
                 fresh: list[FreshChunk]) -> None:
        """`models`: shard -> `bm25.Postings`; `dropped`: shard -> the note numbers whose
        indexed chunks no longer count."""
        self.reader = reader
        self.models = models
        self.fresh = fresh
        self.spans: dict[str, list[tuple[int, int]]] = {}
        for shard, numbers in dropped.items():
            spans = [(first, first + count) for first, count in
                     (reader.chunk_span(n) for n in numbers) if count]
            if spans:
                self.spans[shard] = spans
        self.removed = {s: sum(hi - lo for lo, hi in sp) for s, sp in self.spans.items()}
        self._avg: dict[str, float] = {}

    @property
    def extra_docs(self) -> int:
        return len(self.fresh) - sum(self.removed.values())

    def extra_df(self, terms: Sequence[str]) -> dict[str, int]:
        """Per term, chunks added that hold it minus dropped chunks that held it."""
        out: dict[str, int] = {}
        for t in set(terms):
            gone = sum(self.models[s].count_in(t, sp) for s, sp in self.spans.items()
                       if s in self.models)
            out[t] = sum(1 for f in self.fresh if t in f.counts) - gone
        return out

    def _avgdl(self, shard: str) -> float:
        """The mean chunk length `shard` has after a rebuild: its chunks' lengths minus
        the dropped ones, plus the new chunks joining it (a new shard: theirs alone)."""
        if shard in self._avg:
            return self._avg[shard]
        mine = [f.length for f in self.fresh if f.shard == shard]
        total, count = sum(mine), len(mine)
        model = self.models.get(shard)
        if model is not None:
            lengths = model.lengths()
            total += sum(lengths) - sum(sum(lengths[lo:hi]) for lo, hi in self.spans.get(
                shard, ()))
            count += model.num_docs - self.removed.get(shard, 0)
        self._avg[shard] = total / count if count else 1.0
        return self._avg[shard]

    def moved(self) -> set[str]:
        """Shards whose mean chunk length a rebuild would change: chunks dropped from
        them or joining them. Their stored scores are scored again (`top`)."""
        return {s for s in (*self.spans, *(f.shard for f in self.fresh)) if s in self.models}

    def top(self, shard: str, terms: Sequence[str], idf: dict[str, float], n: int
            ) -> list[tuple[int, float]]:
        """`bm25.Postings.top` for a moved shard, each stored level scored again with the
        new mean length: the term frequency follows from the level, the chunk's length
        and the old mean (to well within a count), then its level as a rebuild stores it."""
        model = self.models[shard]
        lengths, old, new = model.lengths(), model.avgdl(), self._avgdl(shard)
        k1, b = float(bm25mod.PARAMS["k1"]), float(bm25mod.PARAMS["b"])
        dropped = self.spans.get(shard, [])
        scores: dict[int, array[float]] = {}
        for t in terms:
            weight = idf.get(t, 0.0) * bm25mod.LEVEL
            docs, levels = model.entries(t)
            for d, q in zip(docs, levels, strict=True):
                if any(lo <= d < hi for lo, hi in dropped):
                    continue
                size = lengths[d]
                part = min(q, 254.5) * bm25mod.LEVEL
                tf = max(1, round(part * k1 * (1 - b + b * size / old) / (1 - part)))
                level = _level(tf, k1 * (1 - b + b * size / new))
                got = scores.get(d)
                if got is None:
                    got = scores[d] = array("f", [0.0])  # float32 sums, as the shards'
                got[0] += level * weight
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1][0], kv[0]))
        return [(d, float(v[0])) for d, v in ranked[:n] if v[0] > 0]

    def scores(self, terms: Sequence[str], idf: dict[str, float]) -> list[tuple[int, float]]:
        """(fresh chunk number, BM25 score) of the new chunks holding a query term, as a
        rebuilt index would score them (`idf`: each term's IDF after the rebuild)."""
        k1, b = float(bm25mod.PARAMS["k1"]), float(bm25mod.PARAMS["b"])
        avg: dict[str, float] = {}
        out: list[tuple[int, float]] = []
        for i, f in enumerate(self.fresh):
            if not any(t in f.counts for t in terms):
                continue
            if f.shard not in avg:
                avg[f.shard] = self._avgdl(f.shard)
            norm = k1 * (1 - b + b * f.length / avg[f.shard]) if avg[f.shard] else k1
            total = array("f", [0.0])  # float32 sums, as the shards' scores
            for t in terms:
                tf = f.counts.get(t, 0)
                if tf:
                    total[0] += _level(tf, norm) * idf[t] * bm25mod.LEVEL
            out.append((i, float(total[0])))
        return out


def _level(tf: int, norm: float) -> int:
    """The stored byte of BM25's term-frequency part, `tf / (tf + norm)` (kbase_ci.index.
    bm25.LEVEL): what a build writes for this term frequency and length."""
    return min(255, max(1, round(tf / (tf + norm) / bm25mod.LEVEL)))
