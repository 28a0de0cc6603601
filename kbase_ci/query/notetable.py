"""The current notes as a query sees them: `NoteTable`, the index's note rows (turned
into `NoteInfo` records only when asked for) with the notes changed since overlaid, and
the link and edge records `kbase_ci.query.view.QueryView` gives (`LinkInfo`,
`NoteEdges`).
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, ValuesView

from kbase_ci.index.layout import NOTE_ROWS_FILE
from kbase_ci.index.reader import IndexReader
from kbase_ci.typedjson import Record


class NoteInfo(Record):
    path: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    domain: str
    size: int
    headings: tuple[tuple[int, str, int], ...]
    block_ids: tuple[tuple[str, int], ...]
    similar: tuple[tuple[str, float], ...]
    stale: bool


class LinkInfo(Record):
    source: str
    line: int
    col: int
    raw: str
    target: str | None
    """Note path, attachment path, or None (unresolved, external, escaping)."""
    subpath: str
    status: str
    embed: bool
    anchor_found: bool | None


class NoteTable(Mapping[str, NoteInfo]):
    """The current notes: index rows (read and turned into records only when asked for)
    minus the deleted and changed ones, plus fresh parses of the changed and added ones."""

    def __init__(self, reader: IndexReader, paths: list[str], number: dict[str, int],
                 fresh: dict[str, NoteInfo], deleted: set[str],
                 moved: Mapping[str, str] | None = None) -> None:
        self._reader = reader
        self._moved = moved or {}
        self._paths = paths
        self._number = number
        self._fresh = fresh
        self._deleted = deleted
        # Index rows are in path order already; only an overlay needs a new sort.
        self._order = (sorted({*(p for p in paths if p not in deleted), *fresh})
                       if fresh or deleted else paths)

    def __getitem__(self, path: str) -> NoteInfo:
        if path in self._fresh:
            return self._fresh[path]
        if path in self._deleted or path not in self._number:
            raise KeyError(path)
        row = self._reader.note_row(self._number[path])
        # The index's similar list: a note moved since is shown at its new path.
        moved = self._moved
        similar = tuple((moved.get(p, p), float(s)) for p, s in
                        ((self._paths[n], s) for n, s in row.similar)
                        if p not in self._deleted or p in moved)
        return NoteInfo(path, row.title, tuple(row.aliases), tuple(row.tags), row.domain,
                        row.size, tuple((h[0], h[1], h[2]) for h in row.headings),
                        tuple((b[0], b[1]) for b in row.block_ids), similar, False)

    def __contains__(self, path: object) -> bool:
        return path in self._fresh or (path in self._number and path not in self._deleted)

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def values(self) -> ValuesView[NoteInfo]:
        self._reader.rows(NOTE_ROWS_FILE)  # one decode for all, not one per row
        return super().values()

    def items(self) -> ItemsView[str, NoteInfo]:
        self._reader.rows(NOTE_ROWS_FILE)
        return super().items()

    def named(self, name: str) -> list[str]:
        """Paths whose title or an alias casefolds to `name` (already casefolded)."""
        out = [p for p in (self._paths[i] for i in self._reader.names().get(name, ()))
               if p not in self._deleted and p not in self._fresh]
        out += [info.path for info in self._fresh.values()
                if name in {n.casefold() for n in (info.title, *info.aliases)}]
        return out


class NoteEdges(Record):
    paths: tuple[str, ...]
    """The current notes, sorted; a note's position here is its node number."""
    pairs: tuple[tuple[int, int], ...]
    """Distinct (source, target) node numbers of resolved note-to-note links, sorted;
    a link from a note to itself (`[[#Heading]]`) is not an edge."""
