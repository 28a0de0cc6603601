"""`mentions.jsonl`: where each note's title or aliases are written as words in other
notes (`kbase_ci.parse.namematch`), so that `explore` and `links --unlinked` list a
note's unlinked mentions without reading the whole vault per query.

A row file (kbase_ci.index.rowfile: a query decodes the one row it needs), one row per
note in note-number order (as notes.json):

    [[source, count, [[line, col, length], ...]], ...]

the notes whose prose names it, by note number, each with how many times (`count`) and
the first `MAX_PLACES` places. Its format version is the manifest's `mentions.version`.
Every mention is kept, linked or not: whether two notes are linked is decided at query
time, where the freshness overlay knows the links of the work tree. A note never
mentions itself here.

A full build walks every note's words once with all the names at once (`Matcher`); an
incremental one whose note paths and aliases did not change (the manifest's
`link_inputs`) searches only the changed notes (docs/index-format.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kbase_ci.index.blocks import Mentions
from kbase_ci.index.layout import MENTIONS_FILE
from kbase_ci.index.previous import PreviousIndex
from kbase_ci.index.rowfile import all_rows, write_rows
from kbase_ci.index.validation import mention_row
from kbase_ci.parse.namematch import MAX_PLACES, VERSION, Matcher
from kbase_ci.parse.outline import note_text
from kbase_ci.parsed import ParsedNote
from kbase_ci.vault.notefiles import Vault

_READ_STEP = 2000


def name_matcher(notes: Sequence[ParsedNote]) -> Matcher[int]:
    """A matcher of every note's title and aliases, to its note number."""
    names: dict[str, list[int]] = {}
    for i, n in enumerate(notes):
        for name in dict.fromkeys((n.title, *n.aliases)):
            names.setdefault(name, []).append(i)
    return Matcher(names)


def mentions_table(vault: Vault, notes: Sequence[ParsedNote],
                   previous: PreviousIndex | None = None, link_key: str | None = None
                   ) -> tuple[list[list[Any]], int]:
    """The mentions.jsonl rows for `notes` (sorted by path, as in notes.json), and how
    many names were skipped. With the `previous` index, when its names are these
    (`link_key`, the digest of note paths and aliases, is its `link_inputs`) and its
    notes are these in this order, only the changed notes are searched again: the rows
    of the others stay as they were, and the table is byte for byte a full build's."""
    matcher = name_matcher(notes)
    rows: list[dict[int, list[Any]]] = [{} for _ in notes]
    redo: Sequence[int] = range(len(notes))
    old = _previous_rows(previous, link_key, notes, vault)
    if old is not None:
        redo, kept = old
        for target, entries in enumerate(kept):
            rows[target] = {e[0]: e for e in entries}
    files = [(i, nf) for i in redo if (nf := vault.note(notes[i].path)) is not None]
    for start in range(0, len(files) if matcher else 0, _READ_STEP):
        part = files[start:start + _READ_STEP]
        data = vault.read(nf for _, nf in part)
        for source, nf in part:
            for hit in matcher.find(note_text(data[nf.path])):
                if hit.target == source:
                    continue
                row = rows[hit.target].setdefault(source, [source, 0, []])
                row[1] += 1
                if len(row[2]) < MAX_PLACES:
                    row[2].append([hit.line, hit.col, hit.length])
    return [[r[s] for s in sorted(r)] for r in rows], len(matcher.skipped)


def _previous_rows(previous: PreviousIndex | None, link_key: str | None,
                   notes: Sequence[ParsedNote], vault: Vault
                   ) -> tuple[list[int], list[list[Any]]] | None:
    """(the notes to search again, every row without them) from the previous index,
    when it can be reused (see `mentions_table`); else None."""
    if previous is None or link_key is None or previous.manifest.link_inputs != link_key \
            or previous.manifest.mentions is None:
        return None
    if previous.manifest.mentions.version != VERSION:
        return None
    data = previous.data(MENTIONS_FILE)
    table = all_rows(data) if data is not None else None
    # The old branch's rows were checked against its manifest's hash only: their shape
    # is checked here before any is copied into the new index.
    if table is None or len(table) != len(notes) or \
            not all(mention_row(row, len(notes)) for row in table):
        return None
    paths = [n.path for n in notes]
    changed = previous.changed_notes(
        paths, {nf.path: nf.sha for p in paths if (nf := vault.note(p)) is not None})
    if changed is None:
        return None
    kept = [[e for e in row if e[0] not in changed] for row in table]
    return sorted(changed), kept


def write_mentions(root: Path, vault: Vault, notes: Sequence[ParsedNote],
                   previous: PreviousIndex | None = None, link_key: str | None = None
                   ) -> Mentions:
    """Write `root/mentions.jsonl` for `notes`; returns its manifest block."""
    rows, skipped = mentions_table(vault, notes, previous, link_key)
    write_rows(root / MENTIONS_FILE, rows)
    return Mentions(VERSION, sum(len(r) for r in rows), skipped)
