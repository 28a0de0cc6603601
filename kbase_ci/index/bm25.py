"""One shard's BM25 index as a query reads it (`Postings`), without bm25s: the files'
layout, the settings and how they are built are `bm25files`, whose names are importable
from here too (`__all__`).
"""

from __future__ import annotations

import heapq
import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from kbase_ci.errors import IndexFormatError
from kbase_ci.index.bm25files import (
    BLOCK,
    FILES,
    HEADING_WEIGHT,
    LENGTHS_FILE,
    LEVEL,
    PARAMS,
    STATS_FILE,
    TITLE_WEIGHT,
    build_bm25,
    front_coded,
    indexed_text,
    settings,
)
from kbase_ci.index.idf import idf

__all__ = ["BLOCK", "FILES", "HEADING_WEIGHT", "LENGTHS_FILE", "LEVEL", "PARAMS", "STATS_FILE",
           "TITLE_WEIGHT", "Postings", "build_bm25", "front_coded", "indexed_text", "settings"]


def _read_leb128(data: Sequence[int], at: int) -> tuple[int, int]:
    """(value, position after it) of the LEB128 number at `at` (at most 10 bytes: a
    forged run of continuation bytes is refused, not read into a huge number)."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise ValueError("LEB128 number longer than 10 bytes")


def _upto(blocks: Sequence[int], data: Sequence[int], key: bytes) -> int:
    """How many blocks of a shard's terms begin with a term <= `key` (a binary search
    over the blocks' first terms; the last triple of `blocks` marks the end)."""
    lo, hi = 0, len(blocks) // 3 - 1
    while lo < hi:
        mid = (lo + hi) // 2
        size, at = _read_leb128(data, int(blocks[3 * mid]) + 1)
        if bytes(data[at:at + size]) <= key:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _block_terms(data: Sequence[int], blocks: Sequence[int], b: int
                 ) -> Iterator[tuple[bytes, int]]:
    """(term, document frequency) of block `b` of a shard's front-coded terms, in order."""
    at, end = int(blocks[3 * b]), int(blocks[3 * b + 3])
    term = b""
    while at < end:
        shared = data[at]
        size, at = _read_leb128(data, at + 1)
        term = term[:shared] + bytes(data[at:at + size])
        df, at = _read_leb128(data, at + size)
        yield term, df


class Postings:
    """One shard's BM25 matrix (state: the reader; its files are read when a query's
    terms need them, so a shard without any of them costs two small reads)."""

    def __init__(self, reader: Any, base: str, num_docs: int) -> None:
        self.reader, self.base, self.num_docs = reader, base, num_docs
        self._found: dict[bytes, tuple[int, int] | None] = {}

    def __len__(self) -> int:
        """The number of terms of the shard."""
        blocks = self.reader.ints(self.base + FILES[0])
        return int(blocks[-1]) if len(blocks) else 0

    def postings(self, term: str) -> tuple[int, int] | None:
        """(first, end) postings of `term`, or None when no chunk of the shard has it."""
        key = term.encode()
        if key in self._found:
            return self._found[key]
        blocks = self.reader.ints(self.base + FILES[0])
        data = self.reader.ints(self.base + FILES[3])
        lo = _upto(blocks, data, key)
        got = self._scan(data, blocks, lo - 1, key) if lo else None
        self._found[key] = got
        return got

    def starting(self, prefix: str) -> Iterator[tuple[str, int]]:
        """(term, document frequency) of the shard's terms that begin with `prefix`, in
        term order: the blocks from the last one whose first term is <= `prefix`, read
        until a term past them (a query's near words: kbase_ci.query.misspell)."""
        key = prefix.encode()
        blocks = self.reader.ints(self.base + FILES[0])
        data = self.reader.ints(self.base + FILES[3])
        for b in range(max(_upto(blocks, data, key) - 1, 0), len(blocks) // 3 - 1):
            for term, df in _block_terms(data, blocks, b):
                if term.startswith(key):
                    yield term.decode(errors="replace"), df
                elif term > key:
                    return

    @staticmethod
    def _scan(data: Sequence[int], blocks: Sequence[int], b: int,
              key: bytes) -> tuple[int, int] | None:
        posting = int(blocks[3 * b + 1])
        for term, df in _block_terms(data, blocks, b):
            if term == key:
                return posting, posting + df
            if term > key:
                return None
            posting += df
        return None

    def validate(self) -> None:
        """IndexFormatError unless the shard's four files are one well-formed matrix:
        blocks ascending, every term decodable inside its block and in sorted order, the
        postings of the terms adding up to the docs and scores, every doc a chunk."""
        blocks = self.reader.ints(self.base + FILES[0])
        data = self.reader.ints(self.base + FILES[3])
        docs = self.reader.ints(self.base + FILES[1])
        levels = self.reader.ints(self.base + FILES[2])
        bad = IndexFormatError(f"{self.reader.root}: {self.base}: {', '.join(FILES)} do "
                               "not form a BM25 matrix: the index is damaged or forged")
        if len(blocks) < 3 or len(blocks) % 3 or len(docs) != len(levels) or \
                (len(docs) and (min(docs) < 0 or max(docs) >= self.num_docs)):
            raise bad
        posting = terms = 0
        previous = b""
        try:
            for b in range(len(blocks) // 3 - 1):
                at, end = int(blocks[3 * b]), int(blocks[3 * b + 3])
                if (int(blocks[3 * b + 1]), int(blocks[3 * b + 2])) != (posting, terms) \
                        or not 0 <= at <= end <= len(data):
                    raise bad
                term = b""
                while at < end:
                    shared = data[at]
                    size, at = _read_leb128(data, at + 1)
                    if shared > len(term) or at + size > end:
                        raise bad
                    term = term[:shared] + bytes(data[at:at + size])
                    df, at = _read_leb128(data, at + size)
                    if term <= previous and terms:
                        raise bad
                    previous, posting, terms = term, posting + df, terms + 1
        except (IndexError, ValueError):
            raise bad from None
        if (int(blocks[-3]), int(blocks[-2]), int(blocks[-1])) != (len(data), posting, terms) \
                or posting != len(docs):
            raise bad

    def doc_freq(self, term: str) -> int:
        """How many chunks of the shard contain `term`."""
        got = self.postings(term)
        return got[1] - got[0] if got is not None else 0

    def contains(self, term: str, chunk: int) -> bool:
        """Whether chunk `chunk` holds `term` (postings are in chunk order: a bisection)."""
        got = self.postings(term)
        if got is None:
            return False
        docs = self.reader.ints(self.base + FILES[1])
        at = bisect_left(docs, chunk, got[0], got[1])
        return at < got[1] and int(docs[at]) == chunk

    def count_in(self, term: str, spans: Sequence[tuple[int, int]]) -> int:
        """How many chunks of the `[first, end)` chunk ranges hold `term`."""
        got = self.postings(term)
        if got is None or not spans:
            return 0
        docs = self.reader.ints(self.base + FILES[1])
        return sum(bisect_left(docs, hi, got[0], got[1]) - bisect_left(docs, lo, got[0], got[1])
                   for lo, hi in spans)

    def avgdl(self) -> float:
        """The shard's mean chunk length in tokens (`STATS_FILE`)."""
        stats = self.reader.json(self.base + STATS_FILE)
        # The branch's writer chose the file and its hash: a shape it did not get from a
        # build is a located error, not a crash (every hybrid query reads it).
        got = stats.get("avgdl") if isinstance(stats, dict) else None
        if isinstance(got, bool) or not isinstance(got, int | float) \
                or not 0 <= got < float("inf"):
            raise IndexFormatError(f"{self.reader.root}: {self.base}{STATS_FILE}: "
                                   "avgdl is not a finite number of tokens")
        return float(got)

    def lengths(self) -> Sequence[int]:
        """Each chunk's length in tokens (`LENGTHS_FILE`)."""
        got: Sequence[int] = self.reader.ints(self.base + LENGTHS_FILE)
        return got

    def entries(self, term: str) -> tuple[Sequence[int], Sequence[int]]:
        """The chunks holding `term` and their stored levels (term-frequency part x 255)."""
        got = self.postings(term)
        if got is None:
            return (), ()
        lo, hi = got
        return (self.reader.ints(self.base + FILES[1])[lo:hi],
                self.reader.ints(self.base + FILES[2])[lo:hi])

    def get_scores(self, terms: Sequence[str],
                   weights: Mapping[str, float] | None = None) -> array[float] | None:
        """float32 score per chunk for the query `terms` (a repeated term counts again,
        as in bm25s); None when none of them occurs in the shard. `weights` multiplies a
        term's stored scores (see `idf_weights`)."""
        got = self._accumulate(terms, weights)
        return got[0] if got is not None else None

    def top(self, terms: Sequence[str], weights: Mapping[str, float] | None,
            n: int) -> list[tuple[int, float]]:
        """(chunk, score) of the `n` best chunks with a positive score, best first (ties:
        lower chunk first); looks only at the chunks holding a query term."""
        if "numpy" in sys.modules:  # a hybrid query has it loaded: sum postings in C
            return self._top_numpy(terms, weights, n)
        got = self._accumulate(terms, weights)
        if got is None:
            return []
        scores, touched = got
        ranked = sorted(touched)  # nlargest is stable: equal scores keep chunk order
        best = heapq.nlargest(n, ranked, key=scores.__getitem__)
        return [(i, scores[i]) for i in best if scores[i] > 0]

    def _top_numpy(self, terms: Sequence[str], weights: Mapping[str, float] | None,
                   n: int) -> list[tuple[int, float]]:
        """`top` with numpy: the same float32 sums in the same order (a chunk occurs once
        per term, so adding a term's postings at once is adding them one by one), the same
        ranking. At paragraph grain a common word has thousands of postings: on the
        generated 10k-note vault this is most of a warm hybrid query in plain Python."""
        import numpy as np

        found = [(t, p) for t in terms if (p := self.postings(t)) is not None]
        if not found:
            return []
        docs = np.asarray(self.reader.ints(self.base + FILES[1]))
        levels = np.asarray(self.reader.ints(self.base + FILES[2]))
        if len(levels) != len(docs):
            raise IndexFormatError(f"{self.base}: BM25 scores and chunks differ in length")
        scores = np.zeros(self.num_docs, dtype=np.float32)
        for term, (lo, hi) in found:
            factor = idf(self.num_docs, hi - lo) * LEVEL
            if weights is not None and term in weights:
                factor *= weights[term]
            value = np.asarray([q * factor for q in range(256)], dtype=np.float32)
            scores[docs[lo:hi]] += value[levels[lo:hi]]
        hit = np.flatnonzero(scores > 0)
        best = hit[np.argsort(-scores[hit], kind="stable")[:n]]
        return [(int(i), float(scores[i])) for i in best]

    def _accumulate(self, terms: Sequence[str], weights: Mapping[str, float] | None
                    ) -> tuple[array[float], set[int]] | None:
        """Plain Python over the postings, not numpy: importing numpy costs more than a
        whole query (~100 ms). Sums are float32 like bm25s's (`array("f")` rounds every
        stored value)."""
        found = [(t, p) for t in terms if (p := self.postings(t)) is not None]
        if not found:
            return None
        docs = self.reader.ints(self.base + FILES[1])
        levels = self.reader.ints(self.base + FILES[2])
        if len(levels) != len(docs):
            raise IndexFormatError(f"{self.base}: BM25 scores and chunks differ in length")
        scores = array("f", bytes(4 * self.num_docs))
        touched: set[int] = set()
        for term, (lo, hi) in found:
            factor = idf(self.num_docs, hi - lo) * LEVEL
            if weights is not None and term in weights:
                factor *= weights[term]
            ids = docs[lo:hi]
            if hi - lo > 256:  # one product per byte value, not per posting
                value = array("f", [q * factor for q in range(256)])
                for d, q in zip(ids, levels[lo:hi], strict=True):
                    scores[d] += value[q]
            else:
                for d, v in zip(ids, array("f", [q * factor for q in levels[lo:hi]]),
                                strict=True):
                    scores[d] += v
            touched.update(ids)
        return scores, touched
