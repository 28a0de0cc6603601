"""One shard's BM25 index: bm25s scores the chunks at build time, and the scores are
saved as our own term-major `.npy` arrays (`FILES`) with `stats.json`, which queries read
without bm25s.

Each chunk is indexed as its note's title and aliases `TITLE_WEIGHT` times, its heading
path `HEADING_WEIGHT` times, then its text: repeating a field is how plain BM25 weighs it
(the term frequency grows, the document frequency does not), and a query tokenizes the
same way whatever the weights were. Vocabulary ids come from `tokens.make_tokenizer`,
so they follow corpus order and the files do not depend on PYTHONHASHSEED.
"""

from __future__ import annotations

import heapq
import sys
from array import array
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kbase_ci.errors import IndexFormatError
from kbase_ci.index import tokens
from kbase_ci.index.idf import idf
from kbase_ci.index.manifest import dump_table
from kbase_ci.index.rowfile import offsets_dtype, write_npy

TITLE_WEIGHT = 3
HEADING_WEIGHT = 2
PARAMS: dict[str, Any] = {"method": "lucene", "k1": 1.5, "b": 0.75}
FILES = ("blocks.npy", "docs.npy", "scores.npy", "terms.npy")
"""A term-major (CSC) matrix of precomputed BM25 term scores, the columns in sorted
term order. `terms.npy` (uint8) is the sorted vocabulary front-coded in blocks of
`BLOCK` terms: per term, the bytes it shares with the previous term of its block (one
byte; 0 for a block's first term), then LEB128 the length of the rest, the rest (UTF-8),
and LEB128 its document frequency. `blocks.npy` (`rowfile.offsets_dtype`) holds
per block, then once more for the end, three numbers: the block's byte offset in the
terms, its first posting, its first term number. A term's postings are consecutive:
chunks `docs[p:p+df]` with `scores[p:p+df]`, `p` the block's first posting plus the
document frequencies of the terms before it in the block. A query finds a term by
binary search over the blocks' first terms, then a scan of one block: it reads neither a
vocabulary dict nor bm25s. Format 3 kept one int32 offset and one int32 pointer per term
and every term whole: 5.3 MB of the 10 MB of BM25 files of tldr-pages (261k terms, 71%
of them in one chunk); this takes 2.4 MB."""
STATS_FILE = "stats.json"
"""`{"avgdl": mean chunk length in tokens, "docs": chunks}`."""
LENGTHS_FILE = "lengths.npy"
"""Each chunk's length in tokens (uint16, or uint32 past 65,535). With `STATS_FILE`, what
a query needs to score notes changed since the index as a rebuild would: a new chunk
against the shard's new mean length, and the shard's other chunks again with it
(kbase_ci.query.overlay)."""
BLOCK = 32
LEVEL = 1 / 255
"""A stored score byte q means IDF x q x LEVEL. The term-frequency part of bm25s's
lucene BM25, tf / (tf + k1 (1 - b + b |d| / avgdl)), lies in (0, 1): one byte keeps it
to within 0.002 (0.5% of the 0.4 a term seen once in a chunk of average length gets),
where format 3 stored the whole score as float16."""


def settings() -> dict[str, Any]:
    return {**PARAMS, "library": "bm25s", "title_weight": TITLE_WEIGHT,
            "heading_weight": HEADING_WEIGHT, "files": [*FILES, LENGTHS_FILE, STATS_FILE],
            "scores_dtype": "uint8: the term-frequency part x 255; times IDF",
            "docs_dtype": "uint16 below 65536 chunks, else int32",
            "columns": "sorted by term (UTF-8 bytes)", "terms": f"front-coded, {BLOCK} a block",
            "postings": "in chunk order"}


def indexed_text(title: str, aliases: Sequence[str], heading_path: Sequence[str],
                 body: str) -> str:
    names = " ".join([title, *aliases])
    heads = " ".join(heading_path)
    return "\n".join([names] * TITLE_WEIGHT + [heads] * HEADING_WEIGHT + [body])


def build_bm25(texts: Sequence[str], out: Path, stemmer: str = tokens.STEMMER) -> int:
    """Index `texts` (doc id = position) into `out`; returns the vocabulary size."""
    import bm25s
    import numpy as np


    tokenizer = tokens.make_tokenizer(stemmer)
    ids = tokenizer.tokenize(list(texts), update_vocab=True, return_as="ids",
                             show_progress=False)
    vocab = tokenizer.get_vocab_dict()
    model = bm25s.BM25(**PARAMS)
    model.index((ids, vocab), show_progress=False)
    scores = model.scores
    # bm25s numbers terms by first appearance; sorting the columns by term lets a query
    # find a term by binary search over the blocks of `terms.npy`.
    by_term = sorted((t.encode(), i) for t, i in model.vocab_dict.items())
    order = np.asarray([i for _, i in by_term], dtype=np.int64)
    indptr = np.asarray(scores["indptr"], dtype=np.int64)
    lengths = indptr[order + 1] - indptr[order]
    take = (np.concatenate([np.arange(indptr[i], indptr[i + 1]) for i in order])
            if len(order) else np.zeros(0, dtype=np.int64))
    doc_dtype = np.uint16 if scores["num_docs"] <= np.iinfo(np.uint16).max else np.int32
    # 3 bytes per posting instead of 8: uint16 chunk numbers and the term-frequency part
    # of the score in one byte (`LEVEL`); the IDF part is the same for a whole column and
    # follows from its length, so a query multiplies it back.
    data = np.asarray(scores["data"], dtype=np.float64)[take]
    col_idf = np.repeat([idf(int(scores["num_docs"]), int(n)) for n in lengths.tolist()],
                        lengths)
    level = np.clip(np.rint(data / col_idf / LEVEL), 1, 255)
    docs = np.asarray(scores["indices"], dtype=np.int64)[take]
    # Chunk order within a term, whatever bm25s's sparse backend did: a query then tells
    # whether a chunk holds a term by bisection (kbase_ci.query.evidence).
    order_in = np.lexsort((docs, np.repeat(np.arange(len(order)), lengths)))
    out.mkdir(parents=True, exist_ok=True)
    terms, blocks = front_coded([t for t, _ in by_term], lengths.tolist())
    write_npy(out / FILES[0], blocks, offsets_dtype(max(blocks, default=0)))
    write_npy(out / FILES[1], docs[order_in], doc_dtype)
    write_npy(out / FILES[2], level[order_in], "|u1")
    write_npy(out / FILES[3], np.frombuffer(terms, dtype=np.uint8), "|u1")
    lengths_of_docs = [len(doc) for doc in ids]
    write_npy(out / LENGTHS_FILE, lengths_of_docs,
              "<u2" if max(lengths_of_docs, default=0) < 2**16 else "<u4")
    (out / STATS_FILE).write_bytes(dump_table({
        "avgdl": float(np.mean(lengths_of_docs)) if lengths_of_docs else 0.0,
        "docs": len(lengths_of_docs)}))
    return len(by_term)


def _leb128(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def front_coded(terms: Sequence[bytes], dfs: Sequence[int]) -> tuple[bytes, list[int]]:
    """`terms.npy`'s bytes and `blocks.npy`'s numbers for sorted `terms` (see FILES)."""
    buf = bytearray()
    blocks: list[int] = []
    posting = 0
    prev = b""
    for i, (term, df) in enumerate(zip(terms, dfs, strict=True)):
        if i % BLOCK == 0:
            blocks += [len(buf), posting, i]
            shared = 0
        else:
            limit = min(len(term), len(prev), 255)
            shared = 0
            while shared < limit and term[shared] == prev[shared]:
                shared += 1
        buf.append(shared)
        buf += _leb128(len(term) - shared) + term[shared:] + _leb128(df)
        posting += df
        prev = term
    blocks += [len(buf), posting, len(terms)]
    return bytes(buf), blocks


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
        n = len(blocks) // 3 - 1  # the last triple marks the end
        lo, hi = 0, n
        while lo < hi:  # the last block whose first term is <= key
            mid = (lo + hi) // 2
            at = int(blocks[3 * mid]) + 1
            size, at = _read_leb128(data, at)
            if bytes(data[at:at + size]) <= key:
                lo = mid + 1
            else:
                hi = mid
        got = self._scan(data, blocks, lo - 1, key) if lo else None
        self._found[key] = got
        return got

    @staticmethod
    def _scan(data: Sequence[int], blocks: Sequence[int], b: int,
              key: bytes) -> tuple[int, int] | None:
        at, end = int(blocks[3 * b]), int(blocks[3 * b + 3])
        posting = int(blocks[3 * b + 1])
        term = b""
        while at < end:
            shared = data[at]
            size, at = _read_leb128(data, at + 1)
            term = term[:shared] + bytes(data[at:at + size])
            df, at = _read_leb128(data, at + size)
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
        return float(stats["avgdl"])

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
