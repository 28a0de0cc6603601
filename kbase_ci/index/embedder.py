"""Text to vectors with a model2vec static model (the static tier): the mean of the text's
token vectors.

Every model2vec folder (plain, int8 and vocabulary-quantized tables: `staticmodel`) is
read by kbase itself, not by model2vec: its loading imports huggingface_hub and more, and
measured on minilm-static-256 (docs/models.md) it loaded 5x slower and encoded 2.6x slower
with the same token ids.

model2vec's own `encode` spends most of its time in the Rust tokenizer (about 3 MB/s
on one core) and averaging float16 rows. For the usual tokenizers (BERT-style or plain
whitespace pre-tokenization with per-character normalisation) a text's tokens are the
concatenation of its whitespace-separated words' tokens, so each distinct word is
tokenized once and cached: in a vault the same few thousand words repeat endlessly.
As in model2vec, the first `max_length` tokens are kept and unknown tokens dropped; the
token ids equal `StaticModel.tokenize` (a test checks). Queries must be encoded with
this class so that they land in the same space as the index.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.errors import ModelRefused, UsageError
from kbase_ci.index.staticmodel import check_tokenizer_size, load_tables, row_vectors

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_WORDWISE_PRE = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit"}
_CHARWISE_NORM = {"BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "StripAccents"}
_BATCH = 64
_JOIN = 4096
_CACHE_MAX = 500_000


def _state(part: Any) -> Any:
    """A tokenizer component's settings as JSON (None when the tokenizer has none)."""
    return None if part is None else json.loads(part.__getstate__())


def _types(node: Any, key: str) -> set[str]:
    if not node:
        return set()
    if node.get("type") == "Sequence":
        return set().union(*(_types(n, key) for n in node.get(key, [])))
    return {str(node.get("type"))}


class Embedder:
    """A loaded model (state: its tables, tokenizer and a word -> token ids cache)."""

    def __init__(self, folder: Path, dim: int | None = None) -> None:
        """`dim`: keep only the first `dim` dimensions (`embeddings.dim`)."""
        # Shard builds run in worker processes: tokenizers' own thread pool would only
        # fight them for the cores (and warn after a fork).
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            tokenizer = _load_tokenizer(folder / "tokenizer.json")
            self._vocab_size = _vocab_size(tokenizer)
            self._tables = load_tables(folder, self._vocab_size)
            self._max_len = self._tables.max_length
            self._unk = _unk_id(tokenizer)
        except UsageError:
            raise
        except Exception as exc:  # tokenizers raises many kinds
            raise UsageError(f"cannot load embedding model from {folder}: {exc}") from exc
        # As StaticModel: no padding, truncation at max_length.
        tokenizer.no_padding()
        if self._max_len is None:
            tokenizer.no_truncation()
        else:
            tokenizer.enable_truncation(self._max_len)
        full = int(self._tables.table.shape[1])
        if dim is not None and not 0 < dim <= full:
            raise UsageError(f"embeddings.dim must be between 1 and the model's {full}, "
                             f"not {dim}")
        self._dim = full if dim is None else dim
        self._tok = tokenizer
        # The two parts that decide whether words tokenize alone, read without
        # serialising the whole vocabulary (to_str + json.loads: ~80 ms a query).
        pre = _types(_state(tokenizer.pre_tokenizer), "pretokenizers")
        self._wordwise = (bool(pre) and pre <= _WORDWISE_PRE
                          and _types(_state(tokenizer.normalizer), "normalizers")
                          <= _CHARWISE_NORM)
        self._words: dict[str, tuple[int, ...]] = {}

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts: Sequence[str], *, query: bool = False
               ) -> npt.NDArray[np.float16]:
        """Unit-length rows (zero rows for text the model knows nothing of), as float16.
        `query` changes nothing: a static model reads queries and chunks alike."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        for start in range(0, len(texts), _BATCH):
            batch = list(texts[start:start + _BATCH])
            out[start:start + len(batch)] = self._sums(batch)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
        half: npt.NDArray[np.float16] = out.astype(np.float16)
        return half

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids per text, as model2vec's `StaticModel.tokenize` gives them."""
        return self._ids(list(texts))

    def _sums(self, texts: list[str]) -> npt.NDArray[np.float64]:
        import numpy as np

        ids = self._ids(texts)
        lens = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        if not lens.sum():
            return np.zeros((len(texts), self.dim), dtype=np.float64)
        flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(lens.sum()))
        if int(flat.max()) >= self._vocab_size:  # each id must be a table row (`_vocab_size`)
            raise ModelRefused(f"tokenizer.json: token id {int(flat.max())} for a "
                               f"vocabulary of {self._vocab_size} tokens")
        # Sum rows as (texts x distinct tokens) counts @ their vectors: one BLAS call per
        # batch instead of gathering a row per token.
        present = np.bincount(flat, minlength=self._vocab_size) > 0
        vocab = np.flatnonzero(present)
        local = (np.cumsum(present) - 1)[flat]
        owner = np.repeat(np.arange(len(texts), dtype=np.int64), lens)
        counts = np.bincount(owner * len(vocab) + local, minlength=len(texts) * len(vocab))
        # float64: a float32 sum's last bit depends on how BLAS blocks the product, and
        # that could flip a float16 rounding between two builds of the same shard.
        counts_m = counts.reshape(len(texts), len(vocab)).astype(np.float64)
        return counts_m @ row_vectors(self._tables, vocab, self._dim)

    def _learn(self, words: list[str]) -> None:
        """Tokenize new words as one space-joined text (the tokenizer's per-text overhead
        dwarfs a word) and split the tokens back by character offsets."""
        import numpy as np

        text = " ".join(words)
        starts = np.cumsum([0] + [len(w) + 1 for w in words[:-1]])
        cut = self._tok.truncation
        self._tok.no_truncation()
        try:
            enc = self._tok.encode(text, add_special_tokens=False)
        finally:
            if cut is not None:
                self._tok.enable_truncation(cut["max_length"], stride=cut["stride"],
                                            strategy=cut["strategy"],
                                            direction=cut["direction"])
        owner = np.searchsorted(starts, [a for a, _ in enc.offsets], side="right") - 1
        got: list[list[int]] = [[] for _ in words]
        for w, tid in zip(owner.tolist(), enc.ids, strict=True):
            got[w].append(tid)
        self._words.update(zip(words, map(tuple, got), strict=True))

    def _ids(self, texts: list[str]) -> list[list[int]]:
        limit, unk = self._max_len, self._unk
        if not self._wordwise:
            encs = self._tok.encode_batch_fast(texts, add_special_tokens=False)
            return [[i for i in e.ids if i != unk] for e in encs]
        words_of = [t.split() for t in texts]
        cache = self._words
        if len(cache) > _CACHE_MAX:
            cache.clear()
        new = sorted(set(chain.from_iterable(words_of)).difference(cache.keys()))
        for start in range(0, len(new), _JOIN):
            self._learn(new[start:start + _JOIN])
        get = cache.__getitem__
        out: list[list[int]] = []
        for ws in words_of:
            ids = list(chain.from_iterable(map(get, ws)))
            if limit is not None:
                del ids[limit:]
            out.append([i for i in ids if i != unk] if unk is not None and unk in ids
                       else ids)
        return out


def _load_tokenizer(path: Path) -> Any:
    from tokenizers import Tokenizer

    check_tokenizer_size(path)
    return Tokenizer.from_file(str(path))


def _vocab_size(tokenizer: Any) -> int:
    """Tokens of the vocabulary, whose ids must be 0..n-1 (each a table row). Counted,
    not listed: the vocabulary as a dict cost a query 12-19 ms; `_sums` refuses an id
    past the count when one comes up (a forged `tokenizer.json`)."""
    size: int = tokenizer.get_vocab_size(with_added_tokens=True)
    return size


def _unk_id(tokenizer: Any) -> int | None:
    """As model2vec: the model's unk token (WordPiece, BPE, WordLevel) or Unigram unk_id."""
    model = tokenizer.model
    if hasattr(model, "unk_token"):
        token = model.unk_token
        return None if token is None else tokenizer.token_to_id(token)
    unk: int | None = json.loads(tokenizer.to_str())["model"].get("unk_id")
    return unk
