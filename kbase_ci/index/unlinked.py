"""`mentions.json`: where each note's title or aliases are written as words in other
notes (`kbase_ci.parse.namematch`), so that `explore` and `links --unlinked` list a
note's unlinked mentions without reading the whole vault per query.

Layout (canonical JSON like every index file):

    {"version": V,
     "notes": [[[source, count, [[line, col, length], ...]], ...], ...]}

`notes` has one row per note (note-number order, as notes.json): the notes whose prose
names it, by note number, each with how many times (`count`) and the first `MAX_PLACES`
places. Every mention is kept, linked or not: whether two notes are linked is decided at
query time, where the freshness overlay knows the links of the work tree. A note never
mentions itself here.

The table is rebuilt in full on every build: one walk over every note's words with all
the names at once (`Matcher`), ~1/3 s per MB of Markdown (docs/index-format.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kbase_ci.index.blocks import Mentions
from kbase_ci.index.layout import MENTIONS_FILE
from kbase_ci.index.manifest import dump_table
from kbase_ci.parse.namematch import MAX_PLACES, VERSION, Matcher
from kbase_ci.parse.outline import note_text
from kbase_ci.parsed import ParsedNote
from kbase_ci.vault.files import Vault

_READ_STEP = 2000


def name_matcher(notes: Sequence[ParsedNote]) -> Matcher[int]:
    """A matcher of every note's title and aliases, to its note number."""
    names: dict[str, list[int]] = {}
    for i, n in enumerate(notes):
        for name in dict.fromkeys((n.title, *n.aliases)):
            names.setdefault(name, []).append(i)
    return Matcher(names)


def mentions_table(vault: Vault, notes: Sequence[ParsedNote]
                   ) -> tuple[dict[str, Any], int]:
    """The mentions.json object for `notes` (sorted by path, as in notes.json), and how
    many names were skipped."""
    matcher = name_matcher(notes)
    rows: list[dict[int, list[Any]]] = [{} for _ in notes]
    files = [(i, nf) for i, n in enumerate(notes) if (nf := vault.note(n.path)) is not None]
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
    table = {"version": VERSION, "notes": [[r[s] for s in sorted(r)] for r in rows]}
    return table, len(matcher.skipped)


def write_mentions(root: Path, vault: Vault, notes: Sequence[ParsedNote]) -> Mentions:
    """Write `root/mentions.json` for `notes`; returns its manifest block."""
    table, skipped = mentions_table(vault, notes)
    (root / MENTIONS_FILE).write_bytes(dump_table(table))
    return Mentions(VERSION, sum(len(r) for r in table["notes"]), skipped)
