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
from kbase_ci.parse.mentionnoise import is_drawing_path
from kbase_ci.parse.mentions import VERSION, Mention, TermKind, extract, name_keys, term_key
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


def _documented(view: QueryView, table: dict[str, Any], wanted: set[str],
                skip: set[str]) -> set[str]:
    """The keys of `wanted` that a current title, alias or heading documents."""
    paths = view.paths
    names = {key for name, numbers in view.source.reader.names().items()
             if any(paths[i] not in skip for i in numbers) for key in name_keys(name)}
    for key, numbers in table["headings"]:
        if key in wanted and any(paths[i] not in skip for i in numbers):
            names.add(key)
    for path in (*view.fresh.changed, *view.fresh.added):
        note = view.fresh.parsed[path]
        names.update(k for n in (note.title, *note.aliases) for k in name_keys(n))
        names.update(term_key(h.text) for h in note.headings)
    return wanted & names


def undocumented(view: QueryView, *, min_notes: int = 3, max_places: int = 10,
                 keep: Mapping[str, bool] | None = None) -> list[Concept]:
    """Undocumented concepts mentioned by at least `min_notes` current notes, the most
    widespread first (then by key). `keep`: only notes it maps to True count (a domain)."""
    table = _table(view)
    terms: list[list[str]] = table["terms"]
    skip = {*view.fresh.changed, *view.fresh.deleted}
    paths = view.paths
    rows: list[list[list[int]]] = table["notes"]
    counted = [i for i, p in enumerate(paths) if p not in skip and not is_drawing_path(p)
               and (keep is None or keep.get(p, False))]
    counts = [0] * len(terms)
    for i in counted:
        for t, _line, _col in rows[i]:
            counts[t] += 1
    fresh = fresh_mentions(view, [p for p in (*view.fresh.changed, *view.fresh.added)
                                  if (keep is None or keep.get(p, False))
                                  and not is_drawing_path(p)])
    total: dict[str, int] = {}  # a key has a row per spelling; a note mentions one of them
    evident: set[str] = set()  # keys some note writes other than at a sentence start
    for i, c in enumerate(counts):
        if c:
            total[terms[i][0]] = total.get(terms[i][0], 0) + c
            if terms[i][2] != "initial":
                evident.add(terms[i][0])
    for mentions in fresh.values():
        for m in mentions:
            total[m.key] = total.get(m.key, 0) + 1
            if m.kind != "initial":
                evident.add(m.key)
    wanted = {k for k, c in total.items() if c >= min_notes and k in evident}
    if not wanted:
        return []
    wanted -= _documented(view, table, wanted, skip)
    found: dict[str, list[tuple[Place, str, str]]] = {k: [] for k in wanted}
    numbers = {i: t[0] for i, t in enumerate(terms) if t[0] in wanted}
    for i in counted:  # in path order: the first `max_places` are the ones to show
        for t, line, col in rows[i]:
            if t in numbers and len(found[numbers[t]]) < max_places:
                found[numbers[t]].append((Place(paths[i], line, col), terms[t][1],
                                          terms[t][2]))
    for path, mentions in fresh.items():
        for m in mentions:
            if m.key in found:
                found[m.key].append((Place(path, m.line, m.col), m.name, m.kind))
    out = []
    for key, places in found.items():
        places.sort(key=lambda x: x[0].path)
        _, name, kind = places[0]
        out.append(Concept(key, name, "code" if kind == "code" else "name", total[key],
                           tuple(p[0] for p in places[:max_places])))
    out.sort(key=lambda c: (-c.spread, c.key))
    return out
