"""The semantic background of an index: how close a question about nothing in particular
gets to the index's nearest chunk. A search hit's cosine means little on its own (a
static model gives some chunk 0.5 for text the vault never mentions); compared with this
distribution it says whether the query found more than any question would.

`QUERIES` null questions are written from `TEMPLATES` (the shapes agents ask in: "how do
I ...", "what is the ... of ...", bare keywords) filled with words drawn from the
model's own vocabulary by a fixed hash (no random state: the same model always gives the
same questions), and embedded once per build. Function words matter: random words alone
land far from every chunk (median best cosine 0.15 on the shared vaults), while real
questions about absent topics reach 0.4; these reach 0.3. Each shard stores, per null
question, the cosine of its best chunk (`FILE`, uint16 x 10,000); the manifest's
`background` takes the best over all shards, sorted. Taking a maximum is what lets
shards be built apart, reused, and merged from slices with the same bytes as one build.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.index import modelfiles
from kbase_ci.index.blocks import Background
from kbase_ci.index.rowfile import write_npy

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

FILE = "background.npy"
VERSION = 2
QUERIES = 256
WORDS = 3
TEMPLATES = ("how do I {0} {1} {2}", "what is the {0} of {1}", "{0} {1} for {2}",
             "how to {0} a {1} with {2}", "{0} and {1} in {2}", "why does my {0} {1}",
             "best way to {0} {1} {2}", "{0} {1} {2}")
SCALE = 10_000
_MIN_LETTERS = 4
_MARKERS = ("\u0120", "\u2581")  # byte-level BPE's space, SentencePiece's word start


def vocabulary(model: Path) -> list[str]:
    """Whole lowercase ASCII words of at least 4 letters in the model's tokenizer
    vocabulary, sorted (WordPiece, BPE and Unigram `tokenizer.json` layouts)."""
    try:
        spec = modelfiles.settings(model / "tokenizer.json", model)
    except OSError:  # absent, or refused (kbase_ci.index.modelfiles): no words
        return []
    part = spec.get("model") if isinstance(spec, dict) else None
    vocab = part.get("vocab") if isinstance(part, dict) else None
    if isinstance(vocab, dict):
        pieces: list[Any] = list(vocab)
    elif isinstance(vocab, list):  # Unigram: [[piece, score], ...]
        pieces = [v[0] for v in vocab if isinstance(v, list) and v]
    else:
        return []
    words = {str(p).lstrip("".join(_MARKERS)) for p in pieces if isinstance(p, str)}
    return sorted(w for w in words
                  if len(w) >= _MIN_LETTERS and w.isascii() and w.isalpha() and w.islower())


def null_queries(words: Sequence[str]) -> list[str]:
    """`QUERIES` questions, `TEMPLATES` in turn, their `WORDS` words chosen from `words`
    by sha256 of the position: deterministic on every machine and Python."""
    if not words:
        return []
    out = []
    for i in range(QUERIES):
        picks = []
        for j in range(WORDS):
            h = hashlib.sha256(f"kbase-background:{i}:{j}".encode()).digest()
            picks.append(words[int.from_bytes(h[:8], "big") % len(words)])
        out.append(TEMPLATES[i % len(TEMPLATES)].format(*picks))
    return out


_VECTORS: dict[tuple[str, int], Any] = {}


def null_vectors(model: Path, dim: int, embedder: Any) -> npt.NDArray[np.float64] | None:
    """The null queries embedded by `embedder` (unit rows, float64), once per process;
    None when they cannot be (no vocabulary, or an embedder that knows no text: a
    scope's donor of stored vectors)."""
    import numpy as np

    key = (str(model), dim)
    if key not in _VECTORS:
        texts = null_queries(vocabulary(model))
        got = np.asarray(embedder.encode(texts, query=True), dtype=np.float64) if texts \
            else None
        if got is not None:
            norms = np.linalg.norm(got, axis=1)
            got = got[norms > 0] / norms[norms > 0][:, None]
        _VECTORS[key] = got if got is not None and len(got) == QUERIES else None
    out: npt.NDArray[np.float64] | None = _VECTORS[key]
    return out


def shard_top1(rows: npt.NDArray[Any], queries: npt.NDArray[np.float64]
               ) -> npt.NDArray[np.uint16]:
    """Per null query, its best cosine over a shard's vector rows (any length; zero rows
    never win), in 1/10,000 steps, at least 0. float64: a float32 product's last bit
    depends on how BLAS blocks it, and the bytes must not."""
    import numpy as np

    wide = np.asarray(rows, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", wide, wide)) if len(wide) else np.zeros(0)
    wide = wide[norms > 0] / norms[norms > 0][:, None]
    if not len(wide):
        return np.zeros(len(queries), dtype=np.uint16)
    best = (wide @ queries.T).max(axis=0)
    out: npt.NDArray[np.uint16] = np.clip(np.rint(best * SCALE), 0, SCALE).astype(np.uint16)
    return out


def write_shard(path: Path, values: npt.NDArray[np.uint16]) -> None:
    write_npy(path, values, "<u2")


def combine(shards: Sequence[Sequence[int]]) -> Background | None:
    """The manifest's `background`: per null query the best over all shards, sorted,
    as cosines; None without any shard's values."""
    if not shards:
        return None
    best = [max(col) for col in zip(*shards, strict=True)]
    return Background(len(best), VERSION, tuple(round(v / SCALE, 4) for v in sorted(best)))


def percentile(cosine: float, background: Background | None) -> float | None:
    """The share of null queries whose best chunk is less similar than `cosine` (1.0:
    closer than any of them got); None without a background."""
    if background is None or not background.top1:
        return None
    from bisect import bisect_left

    return bisect_left(background.top1, round(cosine, 4)) / len(background.top1)


def margin(cosine: float, background: Background | None) -> float | None:
    """Where `cosine` stands against the background: 0 at its median, 1 at its maximum,
    above 1 beyond every null query (None without a background). A percentile stops at
    1.0, and a transformer's background has a long tail (null questions reach 0.58 at
    p99, 0.73 at most): the margin keeps telling a hit far above it from one just
    past it."""
    if background is None or not background.top1:
        return None
    top1 = background.top1
    mid, top = top1[len(top1) // 2], top1[-1]
    return (cosine - mid) / (top - mid) if top > mid else 0.0
