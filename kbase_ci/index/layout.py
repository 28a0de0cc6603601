"""Every file and table field of an index folder, named once (docs/index-format.md).

Builders and readers both import from here, so reading an index never imports the
build code, and the build code never imports the reader for a name. A table row is a
named tuple (`NoteRow`, `LinkRow`): read by field name, written as the JSON array of its
fields in order.
"""

# No `from __future__ import annotations`: `NamedTuple` turns string annotations into
# compiled forward references, which made these four classes cost 2.3x as much to make.
from typing import Any, NamedTuple

from kbase_ci.vault.indextables import StoredNote

NOTES_FILE = "notes.json"
"""Core: note paths, blob ids, and the small vocabularies of the other tables."""
CORE_FILES = (NOTES_FILE,)
NAMES_FILE = "names.json"
NOTE_ROWS_FILE = "notes.jsonl"
BLOBS_FILE = "blobs.npy"
SIMILAR_FILE = "similar.npy"
SIMILAR_SCORES_FILE = "similar.scores.npy"
LINK_ROWS_FILE = "links.jsonl"
LINKS_FILE = "links.npy"
OUTGOING_FILE = "outgoing.npy"
BACKLINKS_FILE = "backlinks.npy"
BACKLINK_IDS_FILE = "backlinks.ids.npy"
UNRESOLVED_FILE = "unresolved.json"
CONCEPTS_FILE = "concepts.json"
HOOK_LINKS_FILE = "hooklinks.jsonl"
"""Per note, where its links are and what they say, for a fresh clone's hook
(kbase_ci.index.hooklinks; read by kbase_ci.vault.indexhints)."""
MENTIONS_FILE = "mentions.jsonl"
"""Per note, the notes naming it (kbase_ci.index.unlinked): a row file, one row per note,
so a query reads one row."""
PARSED_FILE = "parsed.json"
CHUNKS_FILE = "chunks.json"
CHUNK_LINES_FILE = "chunks.lines.npy"
"""A shard's chunk table: per-note chunk counts, and each chunk's [first, last] line (the
heading path follows from the note's headings)."""
SCOPES_DIR = "scopes/"
"""Scoped indexes inside an index folder (kbase_ci/scope), not listed in its manifest."""


class NoteRow(NamedTuple):
    """A full notes-table row, as readers rebuild it (`notetable.full_note_row`); a
    `notes.jsonl` line holds only its `StoredNote` part."""

    path: str
    title: str
    """The file name without `.md` (Obsidian's note name)."""
    aliases: list[str]
    tags: list[str]
    headings: list[list[Any]]
    """[level, text, line] per heading, in document order."""
    block_ids: list[list[Any]]
    """[id, line] per `^id` marker."""
    frontmatter: dict[str, Any]
    blob: str
    size: int
    tokens: int
    domain: str
    shard: str
    chunks: list[int]
    """[first, count]: the note's chunks of its shard."""
    similar: list[list[Any]]
    """[note number, score] of up to `similar_k` similar notes it does not link to."""


class LinkRow(NamedTuple):
    """A `links.jsonl` line."""

    source: int
    """Note number of the note holding the link."""
    line: int
    col: int
    raw: str
    style: str
    embed: bool
    target: int | str | None
    """Note number when it resolves to a note; path of an attachment; else None."""
    subpath: str
    anchor: str
    status: str
    anchor_found: bool | None
    key: str | None
    """The frontmatter key of a link in a frontmatter value."""


class ChunkRow(NamedTuple):
    """A chunk as `IndexReader.chunks` gives it (a shard's chunk tables hold counts and
    lines; the heading path follows from the note's headings)."""

    note: str
    heading_path: list[str]
    start_line: int
    end_line: int


NOTE_FIELDS = NoteRow._fields
STORED_NOTE_FIELDS = StoredNote._fields
LINK_FIELDS = LinkRow._fields
CHUNK_FIELDS = ChunkRow._fields
