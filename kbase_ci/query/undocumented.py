"""Concepts that recur across notes but no note documents, for the current work tree.

A name that every counting note writes only at the start of a sentence (mention kind
`initial`) is left out: its capitals may be grammar alone ("Reduces IO", a table's
column names), and no note gives evidence that it is a name.

Counts come from the index's `concepts.json` (every note's mentions, precomputed), with
the freshness overlay applied: mentions of notes changed or deleted since the index are
dropped, and changed and added notes are extracted again from the work tree. A concept
is *documented* when its key equals the key of a note title, an alias or a heading of a
current note, or of a part of a title naming one thing twice (`Trap Interrupt (陷入)`,
`parse.mentions.name_keys`), so a note added since the index closes it at once. Excalidraw
notes (`*.excalidraw.md`) count for nothing: they are drawings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kbase_ci.errors import IndexFormatError
from kbase_ci.index.layout import CONCEPTS_FILE
from kbase_ci.parse.conceptmentions import VERSION, Mention, TermKind, extract, name_keys, term_key
from kbase_ci.parse.mentionnoise import is_drawing_path
from kbase_ci.parse.outline import note_text
from kbase_ci.query.view import QueryView


@dataclass(frozen=True, slots=True)
class Place:
    path: str
    line: int
    col: int


@dataclass(frozen=True, slots=True)
class Concept:
    key: str
    name: str
    """As first written (in path order)."""
    kind: TermKind
    spread: int
    """Notes that mention it."""
    places: tuple[Place, ...]
    """First mention in each of the first `max_places` such notes, by path."""


def _table(view: QueryView) -> dict[str, Any]:
    reader = view.source.reader
    if not reader.has(CONCEPTS_FILE):
        raise IndexFormatError(f"{reader.root}: the index has no {CONCEPTS_FILE} (built by an "
                               "older kbase): rebuild it with `kbase index`")
    table: dict[str, Any] = reader.json(CONCEPTS_FILE)
    if table.get("version") != VERSION or len(table.get("notes", ())) != len(view.paths):
        raise IndexFormatError(f"{reader.root}: {CONCEPTS_FILE} is from another kbase "
                               "version or does not match notes.json: rebuild with `kbase index`")
    return table


def fresh_mentions(view: QueryView, paths: Iterable[str]) -> dict[str, list[Mention]]:
    """Mentions of notes as they are in the work tree (one batched read)."""
    files = [nf for p in paths if (nf := view.vault.note(p)) is not None]
    return {p: extract(note_text(data)) for p, data in view.vault.read(files).items()}


class Counts:
    """Every concept's spread over the counted notes (a domain, or all), with the
    overlay applied: what `undocumented` and `kbase concepts` rank."""

    def __init__(self, view: QueryView, keep: Mapping[str, bool] | None = None) -> None:
        self.view = view
        self.table = table = _table(view)
        self.terms: list[list[str]] = table["terms"]
        self.skip = skip = {*view.fresh.changed, *view.fresh.deleted}
        paths = view.paths
        self.rows: list[list[list[int]]] = table["notes"]
        self.counted = [i for i, p in enumerate(paths)
                        if p not in skip and not is_drawing_path(p)
                        and (keep is None or keep.get(p, False))]
        counts = [0] * len(self.terms)
        for i in self.counted:
            for t, _line, _col in self.rows[i]:
                counts[t] += 1
        self.fresh = fresh_mentions(view, [p for p in (*view.fresh.changed, *view.fresh.added)
                                           if (keep is None or keep.get(p, False))
                                           and not is_drawing_path(p)])
        # a key has a row per spelling; a note mentions one of them
        self.total: dict[str, int] = {}
        self.evident: set[str] = set()  # keys some note writes other than at a sentence start
        for i, c in enumerate(counts):
            if c:
                key = self.terms[i][0]
                self.total[key] = self.total.get(key, 0) + c
                if self.terms[i][2] != "initial":
                    self.evident.add(key)
        for mentions in self.fresh.values():
            for m in mentions:
                self.total[m.key] = self.total.get(m.key, 0) + 1
                if m.kind != "initial":
                    self.evident.add(m.key)

    def wanted(self, min_notes: int) -> set[str]:
        """Keys in at least `min_notes` counted notes, written as names somewhere."""
        return {k for k, c in self.total.items() if c >= min_notes and k in self.evident}

    def places(self, wanted: set[str], max_places: int) -> dict[str, list[tuple[Place, str, str]]]:
        """key -> (place, spelling, kind) of its first mention in each note, the first
        `max_places` notes in path order (fresh notes after them)."""
        found: dict[str, list[tuple[Place, str, str]]] = {k: [] for k in wanted}
        numbers = {i: t[0] for i, t in enumerate(self.terms) if t[0] in wanted}
        paths = self.view.paths
        for i in self.counted:  # in path order: the first `max_places` are the ones to show
            for t, line, col in self.rows[i]:
                if t in numbers and len(found[numbers[t]]) < max_places:
                    found[numbers[t]].append((Place(paths[i], line, col), self.terms[t][1],
                                              self.terms[t][2]))
        for path, mentions in self.fresh.items():
            for m in mentions:
                if m.key in found:
                    found[m.key].append((Place(path, m.line, m.col), m.name, m.kind))
        for rows in found.values():
            rows.sort(key=lambda x: x[0].path)
        return found

    def documents(self, wanted: set[str]) -> dict[str, tuple[str, str | None]]:
        """key -> (note, heading or None: its title or an alias) for the keys of
        `wanted` some current note documents: a title or alias first, then a heading
        (the first note in path order)."""
        view, paths, skip = self.view, self.view.paths, self.skip
        found: dict[str, tuple[str, str | None]] = {}
        fresh = {*view.fresh.changed, *view.fresh.added}
        for path in sorted(fresh):
            note = view.fresh.parsed[path]
            for key in {k for n in (note.title, *note.aliases) for k in name_keys(n)}:
                if key in wanted and (key not in found or path < found[key][0]):
                    found[key] = (path, None)
        for name, numbers in sorted(self.view.source.reader.names().items()):
            live = sorted(paths[i] for i in numbers if paths[i] not in skip)
            for key in name_keys(name) if live else ():
                if key in wanted and (key not in found or live[0] < found[key][0]):
                    found[key] = (live[0], None)
        sections: dict[str, str] = {}
        for key, numbers in self.table["headings"]:
            live = sorted(paths[i] for i in numbers if paths[i] not in skip)
            if key in wanted and key not in found and live:
                sections[key] = live[0]
        for path in sorted(fresh):
            for h in view.fresh.parsed[path].headings:
                key = term_key(h.text)
                if key in wanted and key not in found and path < sections.get(key, "\uffff"):
                    sections[key] = path
        for key, path in sections.items():
            info = view.notes[path]
            found[key] = (path, next((text for _lv, text, _ln in info.headings
                                      if term_key(text) == key), key))
        return found


def undocumented(view: QueryView, *, min_notes: int = 3, max_places: int = 10,
                 keep: Mapping[str, bool] | None = None) -> list[Concept]:
    """Undocumented concepts mentioned by at least `min_notes` current notes, the most
    widespread first (then by key). `keep`: only notes it maps to True count (a domain)."""
    counts = Counts(view, keep)
    wanted = counts.wanted(min_notes)
    if not wanted:
        return []
    wanted -= set(counts.documents(wanted))
    out = []
    for key, places in counts.places(wanted, max_places).items():
        _, name, kind = places[0]
        out.append(Concept(key, name, "code" if kind == "code" else "name", counts.total[key],
                           tuple(p[0] for p in places[:max_places])))
    out.sort(key=lambda c: (-c.spread, c.key))
    return out
