"""Text to vectors with a model2vec static model: the mean of the text's token vectors.

model2vec's own `encode` spends most of its time in the Rust tokenizer (about 3 MB/s on
one core) and averaging float16 rows. For the usual tokenizers (BERT-style or plain
whitespace pre-tokenization with per-character normalisation) a text's tokens are the
concatenation of its whitespace-separated words' tokens, so each distinct word is
tokenized once and cached: in a vault the same few thousand words repeat endlessly.
Other tokenizers go through `StaticModel.tokenize` unchanged. The first `max_length`
tokens are kept and unknown tokens dropped, as model2vec does. Queries must be encoded
with this same class so that they land in the same space as the index.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_WORDWISE_PRE = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit"}
_CHARWISE_NORM = {"BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "StripAccents"}
_BATCH = 64
_JOIN = 4096
_CACHE_MAX = 500_000


def _types(node: Any, key: str) -> set[str]:
    if not node:
        return set()
    if node.get("type") == "Sequence":
        return set().union(*(_types(n, key) for n in node.get(key, [])))
    return {str(node.get("type"))}


class Embedder:
    """A loaded model (state: the model and a word -> token ids cache). ~0.35 s to load."""

    def __init__(self, folder: Path) -> None:
        # Shard builds run in worker processes: tokenizers' own thread pool would only
        # fight them for the cores (and warn after a fork).
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import numpy as np
        from huggingface_hub.utils import logging as hf_logging
        from model2vec import StaticModel

        # A model folder without a model card makes huggingface_hub log a warning that
        # would end up on the user's terminal; it says nothing about the index.
        hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]

        try:
            self._model: Any = StaticModel.from_pretrained(folder, force_download=False)
        except Exception as exc:  # model2vec raises plain ValueError/OSError/KeyError
            raise UsageError(f"cannot load embedding model from {folder}: {exc}") from exc
        m = self._model
        self._plain = m.token_mapping is None and m.weights is None
        self._table = np.asarray(m.embedding, dtype=np.float32) if self._plain else None
        spec = json.loads(m.tokenizer.to_str())
        self._wordwise = (
            self._plain
            and bool(_types(spec.get("pre_tokenizer"), "pretokenizers"))
            and _types(spec.get("pre_tokenizer"), "pretokenizers") <= _WORDWISE_PRE
            and _types(spec.get("normalizer"), "normalizers") <= _CHARWISE_NORM)
        self._max_len: int | None = m.max_length
        self._unk: int | None = m.unk_token_id
        self._words: dict[str, tuple[int, ...]] = {}
        # For `_learn`: the model's tokenizer without its 512-token truncation.
        self._whole: Any = copy.deepcopy(m.tokenizer)
        self._whole.no_truncation()

    @property
    def dim(self) -> int:
        return int(self._model.dim)

    @property
    def wordwise(self) -> bool:
        """True when the word-cache fast path is in use."""
        return self._wordwise

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float16]:
        """Unit-length rows (zero rows for text the model knows nothing of), as float16."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float64)
        for start in range(0, len(texts), _BATCH):
            batch = list(texts[start:start + _BATCH])
            out[start:start + len(batch)] = self._sums(batch)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
        half: npt.NDArray[np.float16] = out.astype(np.float16)
        return half

    def _sums(self, texts: list[str]) -> npt.NDArray[np.float64]:
        import numpy as np

        if self._table is None:  # quantized vocabularies: model2vec's own path
            return np.asarray(self._model.encode(texts, show_progress_bar=False,
                                                 use_multiprocessing=False), dtype=np.float64)
        ids = self._ids(texts)
        lens = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        if not lens.sum():
            return np.zeros((len(texts), self.dim), dtype=np.float64)
        flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(lens.sum()))
        # Sum rows as (texts x distinct tokens) counts @ their vectors: one BLAS call per
        # batch instead of gathering a row per token.
        present = np.bincount(flat, minlength=len(self._table)) > 0
        vocab = np.flatnonzero(present)
        local_of = np.cumsum(present) - 1
        local = local_of[flat]
        owner = np.repeat(np.arange(len(texts), dtype=np.int64), lens)
        counts = np.bincount(owner * len(vocab) + local, minlength=len(texts) * len(vocab))
        # float64: a float32 sum's last bit depends on how BLAS blocks the product, and
        # that could flip a float16 rounding between two builds of the same shard.
        counts_m = counts.reshape(len(texts), len(vocab)).astype(np.float64)
        table: npt.NDArray[np.float64] = self._table[vocab].astype(np.float64)
        return counts_m @ table

    def _learn(self, words: list[str]) -> None:
        """Tokenize new words as one space-joined text (the tokenizer's per-text overhead
        dwarfs a word) and split the tokens back by character offsets."""
        import numpy as np

        text = " ".join(words)
        starts = np.cumsum([0] + [len(w) + 1 for w in words[:-1]])
        enc = self._whole.encode(text, add_special_tokens=False)
        owner = np.searchsorted(starts, [a for a, _ in enc.offsets], side="right") - 1
        got: list[list[int]] = [[] for _ in words]
        for w, tid in zip(owner.tolist(), enc.ids, strict=True):
            got[w].append(tid)
        self._words.update(zip(words, map(tuple, got), strict=True))

    def _ids(self, texts: list[str]) -> list[list[int]]:
        if not self._wordwise:
            got: list[list[int]] = self._model.tokenize(texts)
            return got
        words_of = [t.split() for t in texts]
        cache = self._words
        if len(cache) > _CACHE_MAX:
            cache.clear()
        new = sorted(set(chain.from_iterable(words_of)).difference(cache.keys()))
        for start in range(0, len(new), _JOIN):
            self._learn(new[start:start + _JOIN])
        limit, unk = self._max_len, self._unk
        get = cache.__getitem__
        out: list[list[int]] = []
        for ws in words_of:
            ids = list(chain.from_iterable(map(get, ws)))
            if limit is not None:
                del ids[limit:]
            out.append([i for i in ids if i != unk] if unk is not None and unk in ids
                       else ids)
        return out
