"""Every file and table field of an index folder, named once (docs/index-format.md).

Builders and readers both import from here, so reading an index never imports the
build code, and the build code never imports the reader for a name.
"""

from __future__ import annotations

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
PARSED_FILE = "parsed.json"
CHUNKS_FILE = "chunks.json"
CHUNK_LINES_FILE = "chunks.lines.npy"
"""A shard's chunk table: per-note chunk counts, and each chunk's [first, last] line (the
heading path follows from the note's headings)."""
SCOPES_DIR = "scopes/"
"""Scoped indexes inside an index folder (kbase_ci/scope), not listed in its manifest."""

NOTE_FIELDS = ("path", "title", "aliases", "tags", "headings", "block_ids", "frontmatter",
               "blob", "size", "tokens", "domain", "shard", "chunks", "similar")
"""A full notes-table row, as readers rebuild it."""
STORED_NOTE_FIELDS = ("size", "headings", "aliases", "tags", "block_ids", "frontmatter")
"""What a `notes.jsonl` line holds (trailing empty values left out)."""
LINK_FIELDS = ("source", "line", "col", "raw", "style", "embed", "target", "subpath",
               "anchor", "status", "anchor_found", "key")
CHUNK_FIELDS = ("note", "heading_path", "start_line", "end_line")
