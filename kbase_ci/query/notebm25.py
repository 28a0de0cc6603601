"""Note-level BM25: each note scored as one document (its chunks' term counts and lengths
added up), computed at query time from the shards' paragraph postings, beside the
paragraph ranker in hybrid search (kbase_ci.query.fusion).

Why: a note scores as its best paragraph in the paragraph ranker, so a question whose
words stand in different paragraphs of one note ("bad gateway or gateway timeout", 502
and 504 apart) scores as half of it; at note grain the note holds them all (issue 27).

No index format change: a stored posting is the term-frequency part of lucene BM25,
`tf / (tf + K)` with `K = k1 (1 - b + b |d| / avgdl)`, in 255 steps (`bm25.LEVEL`), and
the shard keeps each chunk's length and its mean, so `tf = x K / (1 - x)` comes back
(rounded to a whole count: exact while a step is finer than the gap between two counts,
up to ~18 occurrences in a chunk of average length; a larger count comes back within a
step). A note's length is the sum of its chunks' lengths, so the title and heading
repetitions each chunk carries (`bm25.TITLE_WEIGHT`) count per chunk, as they do in the
note's length: the ratio stays that of the paragraph index. Document frequencies are
counted over notes. Notes changed since the index are scored from their fresh chunks
(kbase_ci.query.overlay), the stored ones left out.

Two ways to the same numbers: with numpy when a hybrid query has loaded it, and in plain
Python over the query terms' postings when not (the model-free tier, `--mode bm25` and
hybrid without the model, never imports numpy: importing it costs more than a whole
query). Both add the same float64 values in the same order, so they agree to the bit
(tests/unit/query/test_search_notelevel.py).

Bounds: the postings read are those the paragraph ranker reads (the query's terms); the
list keeps the best `POOL` notes.
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate
from typing import Any

from kbase_ci.errors import IndexFormatError
from kbase_ci.index.bm25 import PARAMS
from kbase_ci.index.idf import idf
from kbase_ci.index.layout import CHUNKS_FILE
from kbase_ci.query.queryterms import QueryTerms

K1, B = float(PARAMS["k1"]), float(PARAMS["b"])
TOP_LEVEL = 255
"""The stored level of a tf part that rounds to 1: its count is at least ~509 K."""


def length_factor(length: Any, mean: float) -> Any:
    """BM25's `K = k1 (1 - b + b |d| / avgdl)` of documents of `length` (a number or a
    numpy array) in a collection of `mean` length."""
    return K1 * (1.0 - B + B * length / mean)


def chunk_tf(levels: Any, k: Any) -> Any:
    """The term counts the stored `levels` (tf part x 255) of chunks with BM25 length
    factors `k` stand for (numpy arrays)."""
    import numpy as np

    x = np.minimum(np.asarray(levels, dtype=np.float64), TOP_LEVEL - 0.5) / TOP_LEVEL
    return np.maximum(1.0, np.rint(x * k / (1.0 - x)))


def _checked(reader: Any, shard: str, model: Any) -> tuple[list[str], list[int]]:
    """The shard's note path per chunk and chunk count per note; IndexFormatError when
    its chunk counts, chunk lengths and BM25 documents disagree."""
    owners = reader.chunk_notes(shard)  # checks the counts against the notes
    counts = reader.json(f"shards/{shard}/{CHUNKS_FILE}")["counts"]
    lengths = model.lengths()
    if not all(type(c) is int and c >= 0 for c in counts) or \
            (len(lengths) and min(lengths) < 0) or \
            not sum(counts) == len(lengths) == model.num_docs == len(owners):
        raise IndexFormatError(f"{reader.root}: shards/{shard}: the chunk counts, "
                               "chunk lengths and BM25 documents disagree: the index "
                               "is damaged or forged")
    return owners, counts


class _Shard:
    """One shard's notes for a query: paths, lengths, per term each note's count."""

    def __init__(self, reader: Any, shard: str, model: Any, skip: set[str]) -> None:
        import numpy as np

        owners, listed = _checked(reader, shard, model)
        counts = np.asarray(listed, dtype=np.int64)
        lengths = np.asarray(model.lengths(), dtype=np.float64)
        starts = np.cumsum(counts) - counts
        self.paths = [owners[int(s)] if c else "" for s, c in zip(starts, counts,
                                                                   strict=True)]
        self.note_of = np.repeat(np.arange(len(counts)), counts)
        self.length = np.bincount(self.note_of, weights=lengths, minlength=len(counts))
        self.keep = (counts > 0) & np.asarray([p not in skip for p in self.paths], dtype=bool)
        avgdl = model.avgdl() or 1.0
        self.k = length_factor(lengths, avgdl)
        self.model = model
        self.tf: dict[str, Any] = {}

    def term(self, t: str) -> Any:
        """Each note's count of `t` (0 for a left-out note)."""
        import numpy as np

        if t not in self.tf:
            docs, levels = self.model.entries(t)
            docs = np.asarray(docs, dtype=np.int64)
            tf = np.bincount(self.note_of[docs], weights=chunk_tf(levels, self.k[docs]),
                             minlength=len(self.paths)) if len(docs) else \
                np.zeros(len(self.paths))
            self.tf[t] = np.where(self.keep, tf, 0.0)
        return self.tf[t]


class _PlainShard:
    """`_Shard` without numpy: per term, the counts of the notes that hold it."""

    def __init__(self, reader: Any, shard: str, model: Any, skip: set[str]) -> None:
        owners, counts = _checked(reader, shard, model)
        self.starts = list(accumulate(counts, initial=0))
        self.paths = [owners[s] if c else "" for s, c in zip(self.starts, counts,
                                                             strict=False)]
        self.keep = [c > 0 and p not in skip for p, c in zip(self.paths, counts,
                                                              strict=True)]
        self.lengths = model.lengths()
        self.avgdl = model.avgdl() or 1.0
        self.model = model
        self.tf: dict[str, dict[int, float]] = {}

    def length(self, i: int) -> float:
        """Note `i`'s length: its chunks' lengths added up."""
        return float(sum(self.lengths[self.starts[i]:self.starts[i + 1]]))

    def kept_length(self) -> tuple[int, float]:
        """(notes kept, their lengths added up: whole numbers, exact as floats)."""
        left = [i for i, k in enumerate(self.keep) if not k]
        return (len(self.keep) - len(left),
                float(sum(self.lengths)) - sum(self.length(i) for i in left))

    def term(self, t: str) -> dict[int, float]:
        """The count of `t` in each kept note holding it, as `chunk_tf` computes it."""
        if t not in self.tf:
            docs, levels = self.model.entries(t)
            got: dict[int, float] = {}
            starts, keep, lengths, mean = self.starts, self.keep, self.lengths, self.avgdl
            top = TOP_LEVEL - 0.5
            for doc, level in zip(docs, levels, strict=True):  # a hot loop: locals only
                i = bisect_right(starts, doc) - 1
                if keep[i]:
                    k = K1 * (1.0 - B + B * lengths[doc] / mean)  # `length_factor`
                    x = (level if level < top else top) / TOP_LEVEL
                    got[i] = got.get(i, 0.0) + max(1.0, round(x * k / (1.0 - x)))
            self.tf[t] = got
        return self.tf[t]


def note_list(reader: Any, models: dict[str, Any], terms: Sequence[str], skip: set[str],
              fresh: Iterable[Any], pool: int, plain: bool | None = None,
              scale: Mapping[str, float] | None = None) -> list[tuple[str, float]]:
    """(note, note-level BM25 score) of the best `pool` notes holding a query term, best
    first (ties by path). `terms`: the query's terms (a repeated one counts again, as in
    the paragraph ranker); `fresh`: the overlay's chunks of notes changed since the
    index (`skip` their stored ones). `plain`: without numpy (None: unless it is loaded
    already). `scale`: a weight for some terms (words read as slips: kbase_ci.query.
    misspell)."""
    scale = scale or {}
    fresh_tf: dict[str, Counter[str]] = defaultdict(Counter)
    fresh_len: dict[str, float] = defaultdict(float)
    for f in fresh:
        fresh_tf[f.chunk.note].update(f.counts)
        fresh_len[f.chunk.note] += f.length
    if plain if plain is not None else "numpy" not in sys.modules:
        plain_shards = [_PlainShard(reader, name, model, skip) for name, model in models.items()]
        return _plain_list(plain_shards, terms, fresh_tf, fresh_len, pool, scale)
    import numpy as np

    shards = [_Shard(reader, name, model, skip) for name, model in models.items()]
    notes = sum(int(s.keep.sum()) for s in shards) + len(fresh_len)
    if not notes or not terms:
        return []
    avg = (sum(float(s.length[s.keep].sum()) for s in shards) + sum(fresh_len.values())) \
        / notes
    unique = sorted(set(terms))
    df = {t: sum(int(np.count_nonzero(s.term(t))) for s in shards)
          + sum(1 for c in fresh_tf.values() if c[t]) for t in unique}
    weight = {t: idf(notes, df[t]) * n * scale.get(t, 1.0)
              for t, n in Counter(terms).items() if df[t]}
    out: list[tuple[str, float]] = []
    for s in shards:
        norm = length_factor(s.length, avg)
        total = np.zeros(len(s.paths))
        for t, w in weight.items():
            tf = s.term(t)
            total += w * tf / (tf + norm)
        hit = np.flatnonzero(total > 0)
        best = hit[np.argsort(-total[hit], kind="stable")[:pool]]
        out.extend((s.paths[i], float(total[i])) for i in best.tolist())
    return _with_fresh(out, fresh_tf, fresh_len, weight, avg, pool)


def _plain_list(shards: list[_PlainShard], terms: Sequence[str],
                fresh_tf: dict[str, Counter[str]], fresh_len: dict[str, float],
                pool: int, scale: Mapping[str, float]) -> list[tuple[str, float]]:
    """`note_list` in plain Python: the same sums in the same order."""
    sizes = [s.kept_length() for s in shards]
    notes = sum(n for n, _ in sizes) + len(fresh_len)
    if not notes or not terms:
        return []
    avg = (sum(total for _, total in sizes) + sum(fresh_len.values())) / notes
    unique = sorted(set(terms))
    df = {t: sum(len(s.term(t)) for s in shards)
          + sum(1 for c in fresh_tf.values() if c[t]) for t in unique}
    weight = {t: idf(notes, df[t]) * n * scale.get(t, 1.0)
              for t, n in Counter(terms).items() if df[t]}
    out: list[tuple[str, float]] = []
    for s in shards:
        total: dict[int, float] = {}
        norm: dict[int, float] = {}
        for t, w in weight.items():
            for i, tf in s.term(t).items():
                if i not in norm:
                    norm[i] = length_factor(s.length(i), avg)
                total[i] = total.get(i, 0.0) + w * tf / (tf + norm[i])
        best = sorted((i for i, v in total.items() if v > 0),
                      key=lambda i: (-total[i], i))[:pool]
        out.extend((s.paths[i], total[i]) for i in best)
    return _with_fresh(out, fresh_tf, fresh_len, weight, avg, pool)


def _with_fresh(out: list[tuple[str, float]], fresh_tf: dict[str, Counter[str]],
                fresh_len: dict[str, float], weight: dict[str, float], avg: float,
                pool: int) -> list[tuple[str, float]]:
    """`out` with the notes changed since the index scored in, the best `pool`."""
    for path, counts in fresh_tf.items():
        fresh_norm = length_factor(fresh_len[path], avg)
        score = sum(w * counts[t] / (counts[t] + fresh_norm) for t, w in weight.items())
        if score > 0:
            out.append((path, score))
    out.sort(key=lambda x: (-x[1], x[0]))
    return out[:pool]


def ranked_notes(searcher: Any, q: QueryTerms, pool: int, plain: bool | None = None
                 ) -> list[tuple[str, float]]:
    """`note_list` for the query's terms `q` (its `ranked` ones, words read as slips
    weighed by `scale`), over `searcher`'s (kbase_ci.query.searcher.Searcher) index and
    the notes changed since."""
    return note_list(searcher.view.source.reader, searcher.models, q.ranked, searcher.skip,
                     searcher.fresh(), pool, plain, q.scale)
