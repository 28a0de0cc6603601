"""`concepts.json`: every note's concept mentions (see `kbase_ci.parse.conceptmentions`), so that
`kbase gaps` counts a concept's spread without reading 50 MB of notes per query.

Layout (canonical JSON like every index file):

    {"version": V, "terms": [[key, name, kind], ...],      every spelling, sorted
     "notes": [[[term, line, col], ...], ...],              by note number, term order
     "headings": [[key, [note, ...]], ...]}                 every heading, by key

`terms` holds every term of the vault, even one mentioned by a single note: with the
freshness overlay, an edited note can make that term recur, and the count must still be
exact. `headings` gives, for the key of every heading of the vault, the notes that have
it (a concept with that key is documented there); it saves a query decoding every
heading of the vault.
An incremental build reuses the mentions of every note whose blob did not change (the
blob ids by note number are `notes.json`'s; both files are read from the previous index
after checking them against its manifest). Earlier builds repeated those blob ids here
(`blobs`, 0.4 MB at 10k notes); such a file is still read.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from kbase_ci.index.layout import CONCEPTS_FILE
from kbase_ci.index.manifest import dump_table
from kbase_ci.index.previous import PreviousIndex
from kbase_ci.parse.conceptmentions import VERSION, Mention, extract, term_key
from kbase_ci.parse.outline import note_text
from kbase_ci.parsed import ParsedNote
from kbase_ci.vault.notefiles import Vault

_READ_STEP = 2000


def _previous_mentions(previous: PreviousIndex | None) -> dict[str, list[Mention]]:
    """Mentions by blob id from the previous index; {} when it has none or another version."""
    if previous is None:
        return {}
    table = previous.json(CONCEPTS_FILE)
    if not isinstance(table, dict) or table.get("version") != VERSION:
        return {}
    blobs = table.get("blobs")
    if blobs is None:
        core = previous.core()
        blobs = core.blobs if core is not None else None
    if not isinstance(blobs, list) or len(blobs) != len(table["notes"]):
        return {}
    terms = table["terms"]
    out: dict[str, list[Mention]] = {}
    for blob, mentions in zip(blobs, table["notes"], strict=True):
        out[blob] = [Mention(terms[t][0], terms[t][1], terms[t][2], line, col)
                     for t, line, col in mentions]
    return out


def note_mentions(vault: Vault, paths: Sequence[str],
                  previous: PreviousIndex | None = None,
                  progress: Callable[[int, int], None] | None = None
                  ) -> dict[str, list[Mention]]:
    """Mentions of each note of `paths`, reusing the previous index's for unchanged blobs;
    `progress(done, total)` is told the notes extracted so far (38k notes take ~5 s)."""
    known = _previous_mentions(previous)
    files = [nf for p in paths if (nf := vault.note(p)) is not None]
    todo = [nf for nf in files if nf.sha not in known]
    out = {nf.path: known[nf.sha] for nf in files if nf.sha in known}
    # Read in parts, so that reading 38k blobs is not one silent wait before the first
    # report (one `git cat-file` each: a handful of processes).
    for start in range(0, len(todo), _READ_STEP):
        if progress is not None:
            progress(start, len(todo))
        for p, data in vault.read(todo[start:start + _READ_STEP]).items():
            out[p] = extract(note_text(data))
    if progress is not None:
        progress(len(todo), len(todo))
    return out


def concepts_table(paths: Sequence[str], mentions: dict[str, list[Mention]],
                   headings: Sequence[Sequence[str]] = ()) -> dict[str, Any]:
    """The concepts.json object for notes `paths` (in note-number order); `headings`:
    each note's heading texts."""
    # One row per spelling, so that every note's mentions read back exactly as extracted
    # (an incremental build then writes the same bytes as a full one).
    spellings = sorted({(m.key, m.name, m.kind) for p in paths for m in mentions.get(p, ())})
    number = {s: i for i, s in enumerate(spellings)}
    return {
        "version": VERSION,
        "terms": [list(s) for s in spellings],
        "notes": [sorted([number[(m.key, m.name, m.kind)], m.line, m.col]
                         for m in mentions.get(p, ()))
                  for p in paths],
        "headings": _heading_index(headings),
    }


def _heading_index(headings: Sequence[Sequence[str]]) -> list[list[Any]]:
    notes: dict[str, set[int]] = {}
    keys: dict[str, str] = {}  # "Examples", "Overview": most heading texts repeat
    for i, texts in enumerate(headings):
        for text in texts:
            key = keys.get(text)
            if key is None:
                key = keys[text] = term_key(text)
            notes.setdefault(key, set()).add(i)
    return [[k, sorted(notes[k])] for k in sorted(notes)]


def write_concepts(root: Path, vault: Vault, notes: Sequence[ParsedNote],
                   previous: PreviousIndex | None = None,
                   progress: Callable[[int, int], None] | None = None) -> None:
    """Write `root/concepts.json` for `notes` (sorted by path, as in notes.json)."""
    paths = [n.path for n in notes]
    headings = [[h.text for h in n.headings] for n in notes]
    table = _patched(vault, paths, headings, previous) if previous is not None else None
    if table is None:
        table = concepts_table(paths, note_mentions(vault, paths, previous, progress),
                               headings)
    elif progress is not None:  # patched: only the changed notes were extracted
        progress(len(paths), len(paths))
    (root / CONCEPTS_FILE).write_bytes(dump_table(table))


def _patched(vault: Vault, paths: Sequence[str], headings: Sequence[Sequence[str]],
             previous: PreviousIndex) -> dict[str, Any] | None:
    """The previous table with the rows of changed notes replaced, when that is exactly
    what `concepts_table` would build: the same notes in the same order, and the same
    set of spellings (so every term keeps its number). None otherwise.

    Decoding 10k notes' mentions into records and numbering them again took ~0.8 s of a
    one-note incremental build; this reads and patches the table (~0.1 s)."""
    table = previous.json(CONCEPTS_FILE)
    if not isinstance(table, dict) or table.get("version") != VERSION:
        return None
    rows = table["notes"]
    changed = previous.changed_notes(
        paths, {nf.path: nf.sha for p in paths if (nf := vault.note(p)) is not None})
    if changed is None or len(rows) != len(paths):
        return None
    files = [nf for i in sorted(changed) if (nf := vault.note(paths[i])) is not None]
    texts = vault.read(files)
    fresh = {i: extract(note_text(texts[paths[i]])) if paths[i] in texts else []
             for i in sorted(changed)}
    terms = [tuple(t) for t in table["terms"]]
    used = {t for i, row in enumerate(rows) if i not in changed for t, _, _ in row}
    spellings = {terms[t] for t in used}
    spellings.update((m.key, m.name, m.kind) for ms in fresh.values() for m in ms)
    if spellings != set(terms):  # a term appeared or vanished: number them again
        return None
    number = {s: i for i, s in enumerate(terms)}
    notes = list(rows)  # a copy: the previous table is shared (PreviousIndex.json)
    for i, ms in fresh.items():
        notes[i] = sorted([number[(m.key, m.name, m.kind)], m.line, m.col] for m in ms)
    return {"version": VERSION, "terms": table["terms"], "notes": notes,
            "headings": _patched_headings(table["headings"], fresh, headings)}


def _patched_headings(old: list[list[Any]], changed: Collection[int],
                      headings: Sequence[Sequence[str]]) -> list[list[Any]]:
    """`_heading_index(headings)` from the previous index, where only the notes
    `changed` (same numbering) may have other headings. `old` is not modified."""
    gone = set(changed)
    index: dict[str, list[int]] = {}
    for key, notes in old:
        index[key] = notes if gone.isdisjoint(notes) else [i for i in notes if i not in gone]
    for i in sorted(gone):
        for key in dict.fromkeys(map(term_key, headings[i])):
            index[key] = [*index.get(key, ()), i]
    return [[k, sorted(index[k])] for k in sorted(index) if index[k]]
