"""One shard's BM25 files and how they are built: bm25s scores the chunks at build time,
and the scores are saved as our own term-major `.npy` arrays (`FILES`) with `stats.json`,
which queries read without bm25s (`bm25.Postings`).

Each chunk is indexed as its note's title and aliases `TITLE_WEIGHT` times, its heading
path `HEADING_WEIGHT` times, then its text: repeating a field is how plain BM25 weighs it
(the term frequency grows, the document frequency does not), and a query tokenizes the
same way whatever the weights were. Vocabulary ids come from `tokens.make_tokenizer`,
so they follow corpus order and the files do not depend on PYTHONHASHSEED.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

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
