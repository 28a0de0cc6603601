"""The hits a ranker returns: chunks (read lazily: most hits never reach an answer), and
the notes they roll up to (a note's best chunk speaks for it)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


class ChunkHit:
    """A chunk hit. Chunks of the index carry (reader, shard, chunk) and read their
    heading path and lines only when asked: most hits never reach the answer."""

    __slots__ = ("_loc", "_where", "counts", "path", "score")

    def __init__(self, path: str, heading_path: tuple[str, ...], start_line: int,
                 end_line: int, score: float, where: tuple[Any, str, int] | None = None,
                 counts: Counter[str] | None = None) -> None:
        self.path = path
        self.score = score
        self._loc = None if where else (heading_path, start_line, end_line)
        self._where = where
        self.counts = counts
        """A new chunk's term counts (kbase_ci.query.overlay); None for an indexed one."""

    @property
    def where(self) -> tuple[Any, str, int] | None:
        """(reader, shard, chunk) of an indexed chunk."""
        return self._where

    def _located(self) -> tuple[tuple[str, ...], int, int]:
        if self._loc is None:
            assert self._where is not None
            reader, shard, chunk = self._where
            heads, lo, hi = reader.chunk_row(shard, chunk)
            self._loc = (tuple(heads), lo, hi)
        return self._loc

    @property
    def heading_path(self) -> tuple[str, ...]:
        return self._located()[0]

    @property
    def start_line(self) -> int:
        return self._located()[1]

    @property
    def end_line(self) -> int:
        return self._located()[2]


@dataclass
class NoteHit:
    path: str
    score: float
    section: ChunkHit
    ranks: dict[str, tuple[int, float]] = field(default_factory=dict)
    """ranker -> (rank, score), shown by `--explain`."""


def rollup(hits: list[ChunkHit], pool: dict[str, list[ChunkHit]] | None = None
           ) -> list[ChunkHit]:
    """Each note's best chunk hit, best first (ties: by path); every hit is also added
    to its note's list in `pool`."""
    best: dict[str, ChunkHit] = {}
    for h in hits:
        if pool is not None:
            got = pool.get(h.path)
            if got is None:
                pool[h.path] = [h]
            else:
                got.append(h)
        if h.path not in best or h.score > best[h.path].score:
            best[h.path] = h
    return sorted(best.values(), key=lambda h: (-h.score, h.path))
