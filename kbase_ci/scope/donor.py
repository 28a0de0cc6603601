"""Vectors for a scope's chunks, taken from the main index instead of embedding again.

A scope's notes are read at the main index's source commit, so each note chunks exactly
as it did for the main index and its chunk j is chunk `first + j` of the note's main
shard. The donor maps each chunk's embedding text to that stored vector and answers
`encode` like a model; the build (`shardbuild.build_shard`) cannot tell the difference,
and the vectors are the stored f16 bytes, identical to a re-embedding with the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kbase_ci.index import shardbuild
from kbase_ci.index.chunks import chunk_note, embed_text
from kbase_ci.index.reader import IndexReader
from kbase_ci.parsed import ParsedNote

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_UNREADABLE = "KB002"  # as in shardbuild: such notes have no chunks


class Donor:
    """An `Embedder` look-alike (state: text -> vector, and the texts it did not know)."""

    def __init__(self, table: dict[str, npt.NDArray[np.float16]], dim: int) -> None:
        self.table = table
        self.dim = dim
        self.missed: set[str] = set()

    def encode(self, texts: Sequence[str], *, query: bool = False
               ) -> npt.NDArray[np.float16]:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float16)
        for i, text in enumerate(texts):
            vec = self.table.get(text)
            if vec is None:
                self.missed.add(text)
            else:
                out[i] = vec
        return out


def collect(main: IndexReader, notes: Sequence[ParsedNote], contents: Mapping[str, bytes],
            dim: int) -> tuple[Donor, list[str]]:
    """The donor for `notes`, and the notes whose chunks differ from the main index's
    (their chunks get no vector)."""
    import numpy as np

    row_of = {r.path: r for r in main.notes()}
    wanted: dict[str, list[tuple[int, str]]] = {}
    differ: list[str] = []
    for note in notes:
        row = row_of.get(note.path)
        if row is None or any(d.code == _UNREADABLE for d in note.diagnostics):
            continue
        first, count = row.chunks
        chunks = chunk_note(note, contents[note.path])
        if len(chunks) != count:
            differ.append(note.path)
            continue
        for j, c in enumerate(chunks):
            wanted.setdefault(row.shard, []).append(
                (first + j, embed_text(note.title, c)))
    donor: dict[str, npt.NDArray[np.float16]] = {}
    for shard in sorted(wanted):
        index = main.vectors(shard)
        if index is None:
            continue
        keys = np.asarray([k for k, _ in wanted[shard]], dtype=np.uint64)
        got = index.get(keys, dtype="f16")
        for (_, text), vec in zip(wanted[shard], got, strict=True):
            # No stored vector: the model knew none of the chunk's words (zeros).
            donor.setdefault(text, np.zeros(dim, dtype=np.float16) if vec is None
                             else np.asarray(vec, dtype=np.float16))
    return Donor(donor, dim), sorted(differ)


def install(donor: Donor, key: Path, dim: int | None) -> None:
    """Make `shardbuild.embedder_for(key, dim)` return the donor in this process (and in
    forked build workers, which inherit it)."""
    shardbuild.use_embedder(key, dim, donor)


def uninstall(key: Path, dim: int | None) -> None:
    shardbuild.use_embedder(key, dim, None)
