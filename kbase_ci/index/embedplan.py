"""Which texts a build embeds: each distinct chunk text once, whichever shards hold it.

Shards are chunked independently (in worker processes), and the same text often recurs
across them (boilerplate, templates, a heading repeated as its own paragraph: 11% of
dnd-5e-srd's chunk texts repeat one of another shard). A vector depends on its text only
(a transformer runs one text per call, the static model sums the text's own tokens), so
the build asks the model once per distinct text and gives every shard holding it the same
row: the bytes are those of embedding every chunk. `EmbedPlan` (state: the rows so far,
what is queued, who waits for what) is told each chunked shard, hands out the new texts
in pieces for the model, takes the rows back, and says which shards have all their rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kbase_ci.index.shardbuild import Chunked

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

PIECE = 256
"""Texts per model call: small enough to spread a shard's texts over the workers and to
report progress between calls, large enough that a call's overhead does not count."""


class EmbedPlan:
    """The distinct texts of a build's shards and their rows (state)."""

    def __init__(self, piece: int = PIECE) -> None:
        self._piece = piece
        self._rows: dict[str, npt.NDArray[np.float16]] = {}
        self._waiting: dict[str, list[str]] = {}
        """A queued text -> the shards waiting for it."""
        self._missing: dict[str, int] = {}
        """A shard -> how many of its distinct texts have no row yet."""
        self._share: dict[str, tuple[int, int]] = {}
        """A shard -> (its distinct texts, its notes): for progress in notes."""
        self._done: dict[str, int] = {}
        self._told: dict[str, int] = {}
        self.embedded = 0
        """Texts the model was asked for so far."""

    def add(self, shard: Chunked) -> tuple[list[list[str]], bool]:
        """Take a chunked shard: (pieces of texts no shard asked for before, to embed;
        whether the shard already has every row it needs)."""
        distinct = dict.fromkeys(shard.texts)
        new = [t for t in distinct if t not in self._rows and t not in self._waiting]
        for t in distinct:
            if t not in self._rows:
                self._waiting.setdefault(t, []).append(shard.id)
        self._missing[shard.id] = sum(1 for t in distinct if t not in self._rows)
        self._share[shard.id] = (len(distinct), shard.notes)
        self._done[shard.id] = len(distinct) - self._missing[shard.id]
        self._told[shard.id] = 0
        return ([new[i:i + self._piece] for i in range(0, len(new), self._piece)],
                self._missing[shard.id] == 0)

    def took(self, piece: Sequence[str], rows: npt.NDArray[np.float16]) -> list[str]:
        """Store the model's rows for `piece`; the shards that now have all of theirs."""
        self.embedded += len(piece)
        ready = []
        for text, row in zip(piece, rows, strict=True):
            self._rows[text] = row
            for sid in self._waiting.pop(text, ()):
                self._done[sid] += 1
                self._missing[sid] -= 1
                if not self._missing[sid]:
                    ready.append(sid)
        return ready

    def ready(self, shard: Chunked) -> bool:
        """Whether every text of `shard` (added before) has its row."""
        return self._missing.get(shard.id, 0) == 0

    def rows(self, shard: Chunked) -> npt.NDArray[np.float16] | None:
        """The rows of `shard.texts`, in order (None: it has no text to embed)."""
        import numpy as np

        if not shard.texts:
            return None
        return np.stack([self._rows[t] for t in shard.texts])

    def progress(self) -> int:
        """Note steps of embedding newly done since the last call (a shard's notes share
        its embedding in proportion to its distinct texts that have rows)."""
        out = 0
        for sid, (texts, notes) in self._share.items():
            now = notes * self._done[sid] // texts if texts else notes
            out += now - self._told[sid]
            self._told[sid] = now
        return out
