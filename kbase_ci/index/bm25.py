"""One shard's BM25 index, saved in bm25s's own format (`.npy` arrays and JSON).

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

from . import tokens

TITLE_WEIGHT = 3
HEADING_WEIGHT = 2
PARAMS: dict[str, Any] = {"method": "lucene", "k1": 1.5, "b": 0.75}
FILES = ("data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy",
         "params.index.json", "vocab.index.json")


def settings() -> dict[str, Any]:
    return {**PARAMS, "library": "bm25s", "title_weight": TITLE_WEIGHT,
            "heading_weight": HEADING_WEIGHT, "files": list(FILES),
            "data_dtype": "float16", "indices_dtype": "uint16 below 65536 chunks, else int32"}


def indexed_text(title: str, aliases: Sequence[str], heading_path: Sequence[str],
                 body: str) -> str:
    names = " ".join([title, *aliases])
    heads = " ".join(heading_path)
    return "\n".join([names] * TITLE_WEIGHT + [heads] * HEADING_WEIGHT + [body])


def build_bm25(texts: Sequence[str], out: Path) -> int:
    """Index `texts` (doc id = position) into `out`; returns the vocabulary size."""
    import bm25s

    tokenizer = tokens.make_tokenizer()
    ids = tokenizer.tokenize(list(texts), update_vocab=True, return_as="ids",
                             show_progress=False)
    vocab = tokenizer.get_vocab_dict()
    model = bm25s.BM25(**PARAMS)
    model.index((ids, vocab), show_progress=False)
    _shrink(model.scores)
    out.mkdir(parents=True, exist_ok=True)
    model.save(out, show_progress=False)
    return len(model.vocab_dict)


def _shrink(scores: dict[str, Any]) -> None:
    """Store 4 bytes per posting instead of 8: float16 scores (bm25s adds them into a
    float32 array at query time, so sums keep their precision) and uint16 chunk numbers
    when the shard has fewer than 65,536 chunks. The index was as large as the vault."""
    import numpy as np

    scores["data"] = scores["data"].astype(np.float16)
    if scores["num_docs"] <= np.iinfo(np.uint16).max:
        scores["indices"] = scores["indices"].astype(np.uint16)


def load_bm25(directory: Path, *, mmap: bool = True) -> Any:
    """A bm25s.BM25 over a shard's files (memory-mapped by default)."""
    import bm25s

    return bm25s.BM25.load(directory, mmap=mmap, show_progress=False)
