"""The index's core table (`notes.json`) and its stored note rows (`notes.jsonl`),
declared once: kbase_ci.index writes and reads them, and the hook reads them from a
published index branch (`indexhints`) without importing kbase_ci.index (the hook path
imports no index code: pyproject's import-linter contracts), so they live below both.
docs/index-format.md describes the files.
"""

# No `from __future__ import annotations`: `NamedTuple` and the decoder read the
# annotations as evaluated here, once.

from collections.abc import Sequence
from typing import Annotated, Any, NamedTuple

from kbase_ci.typedjson import Record, between, decode, json_field

FORMAT_VERSION = 7
"""The index format (the manifest's `format_version`): what a table of this version holds."""
MAX_SIMILAR = 1000
"""Most similar notes an index keeps per note (`similar_k`)."""


class NotesCore(Record):
    """`notes.json`: what the index keeps once per note. Row order is note number."""

    paths: list[str]
    group: list[int]
    """Per note, the number of its [shard, domain] pair in `groups`."""
    groups: list[tuple[str, str]]
    similar_k: Annotated[int, between(0, MAX_SIMILAR)]
    link_statuses: list[str]
    blobs: list[str] | None = json_field(default=None, omit=True)
    """Blob id per note, when they are not all hex of one width (else in `blobs.npy`,
    `blob_bytes` each)."""
    blob_bytes: Annotated[int, between(1, 64)] | None = json_field(default=None, omit=True)


def read_core(data: Any) -> NotesCore:
    """`notes.json` decoded; `typedjson.ShapeError` naming the first bad key."""
    return decode(NotesCore, data)


class StoredNote(NamedTuple):
    """What a `notes.jsonl` line holds (trailing empty values left out when written;
    `stored_fields` puts them back)."""

    size: int
    headings: list[list[Any]]
    aliases: list[str]
    tags: list[str]
    block_ids: list[list[Any]]
    frontmatter: dict[str, Any]


def stored_fields(stored: Sequence[Any]) -> StoredNote:
    """A `notes.jsonl` line with its left-out trailing fields put back (empty)."""
    empty: list[Any] = [[], [], [], [], {}]  # new each time: callers may modify a row
    return StoredNote._make([*stored, *empty[len(stored) - 1:]])
