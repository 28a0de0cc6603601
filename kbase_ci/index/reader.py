"""Open a built index: check the format version, then the sha256 of every file against
the manifest before trusting a byte of it (`indexfolder.IndexFolder`), and validate its
tables once (`schema.validate`); then read notes, links, chunks, BM25 and vectors.

Hashing a whole 10k-note index costs more than answering a query, so opening checks the
listing (no file missing, none extra) and the hashes of the small core files every query
reads (`CORE_FILES`); any other file is hashed the first time this reader reads it. Decoded
tables stay on the reader, so a long-lived process reuses them across queries.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.errors import IndexFormatError
from kbase_ci.index.indexfolder import IndexFolder
from kbase_ci.index.integrity import manifest_digest, remember, trusted
from kbase_ci.index.layout import (
    BACKLINK_IDS_FILE,
    BACKLINKS_FILE,
    BLOBS_FILE,
    CHUNK_LINES_FILE,
    CHUNKS_FILE,
    LINK_FIELDS,
    LINK_ROWS_FILE,
    NAMES_FILE,
    NOTE_ROWS_FILE,
    NOTES_FILE,
    OUTGOING_FILE,
    SIMILAR_FILE,
    SIMILAR_SCORES_FILE,
    UNRESOLVED_FILE,
    ChunkRow,
    LinkRow,
    NoteRow,
)
from kbase_ci.index.rowfile import int_view
from kbase_ci.index.storednotes import (
    blob_list,
    chunk_notes,
    chunk_spans,
    full_note_row,
    heading_path,
    shard_notes,
    similar_list,
)
from kbase_ci.typedjson import Record, ShapeError
from kbase_ci.vault.indextables import NotesCore, read_core, stored_fields

if TYPE_CHECKING:  # imported where used: see `bm25`
    from kbase_ci.index.bm25 import Postings
    from kbase_ci.index.vectors import Vectors


class LinkTableRows(Record):  # not a dataclass: making one costs every query ~1 ms
    """The whole link table as `IndexReader.links` decodes it."""

    rows: list[LinkRow]
    outgoing: list[tuple[int, int]]
    """Per note: (its first link number, how many links it has)."""
    backlinks: list[list[int]]
    """Per note: the link numbers of links from other notes that resolve to it."""
    unresolved: dict[str, list[int]]
    """Target as written -> link numbers of the unresolved (or escaping) links to it."""


class IndexReader(IndexFolder):
    """A verified index directory and its tables (state: those of `IndexFolder`, and the
    tables decoded so far)."""

    # -- tables --------------------------------------------------------------------------
    @property
    def shards(self) -> list[str]:
        return sorted(self.manifest.shards)

    def core(self) -> NotesCore:
        """`notes.json`: paths, groups (row order = note number), statuses, similar_k."""
        if "core" not in self._cache:
            try:
                self._cache["core"] = read_core(self.json(NOTES_FILE))
            except ShapeError as exc:
                raise IndexFormatError(f"{self.root}: {NOTES_FILE}: {exc}") from None
        out: NotesCore = self._cache["core"]
        return out

    def blobs(self) -> list[str]:
        """Blob id per note number (what the freshness check compares)."""
        if "blobs" not in self._cache:
            core = self.core()
            values: Any = None
            if core.blob_bytes is not None:
                values = int_view(self.data(BLOBS_FILE))
                if values is None:  # a big-endian host: numpy reads it
                    values = self.npy(BLOBS_FILE).tobytes()
                elif values.format != "B":  # relabelled `<u8`: the bytes are not ids
                    raise IndexFormatError(f"{self.root}: {BLOBS_FILE} is not bytes (|u1)")
            self._cache["blobs"] = blob_list(core, values)
        out: list[str] = self._cache["blobs"]
        return out

    def similar(self, number: int) -> list[list[float]]:
        """Note `number`'s similar list: [[note number, score], ...], best first."""
        k = self.core().similar_k
        if not k:
            return []
        return similar_list(self.ints(SIMILAR_FILE), self.ints(SIMILAR_SCORES_FILE), k,
                            number)

    def _members(self) -> dict[str, list[int]]:
        if "members" not in self._cache:
            self._cache["members"] = shard_notes(self.core())
        out: dict[str, list[int]] = self._cache["members"]
        return out

    def chunk_span(self, number: int) -> list[int]:
        """[first chunk, chunk count] of note `number` in its shard."""

        spans: dict[int, list[int]] = self._cache.setdefault("spans", {})
        if number not in spans:
            core = self.core()
            shard = core.groups[core.group[number]][0]
            if shard in self.manifest.shards:
                counts = self.json(f"shards/{shard}/{CHUNKS_FILE}").get("counts")
                spans.update(chunk_spans(self._members()[shard], counts or []))
            spans.setdefault(number, [0, 0])
        return spans[number]

    def note_numbers(self) -> dict[str, int]:
        """path -> note number (row)."""
        if "numbers" not in self._cache:
            self._cache["numbers"] = {p: i for i, p in enumerate(self.core().paths)}
        out: dict[str, int] = self._cache["numbers"]
        return out

    def names(self) -> dict[str, list[int]]:
        """casefolded title or alias -> note numbers."""
        out: dict[str, list[int]] = self.json(NAMES_FILE)
        return out

    def _stored(self, number: int) -> Any:
        """Note `number`'s `notes.jsonl` line as stored (from the decoded table if any)."""
        key = f"rows:{NOTE_ROWS_FILE}"
        return self._cache[key][number] if key in self._cache else \
            self.row(NOTE_ROWS_FILE, number)

    def note_row(self, number: int) -> NoteRow:
        """Row `number` of the notes table."""
        return full_note_row(self._stored(number), self.core(), number,
                             self.blobs()[number], self.chunk_span(number),
                             self.similar(number))

    def link_row(self, number: int) -> LinkRow:
        key = f"rows:{LINK_ROWS_FILE}"
        row = self._cache[key][number] if key in self._cache else \
            self.row(LINK_ROWS_FILE, number)
        try:
            return LinkRow._make(row)
        except TypeError:  # not a row of 12 (validated indexes have none)
            raise IndexFormatError(f"{self.root}: {LINK_ROWS_FILE} row {number} is not a "
                                   "link: the index is damaged or forged") from None

    def link_column(self, field: str) -> list[Any]:
        """One field (`LinkRow`) of every link, by link number (decodes every row once):
        what a scan over all links reads, without a record per link."""
        key = f"column:{field}"
        if key not in self._cache:
            at = LINK_FIELDS.index(field)
            self._cache[key] = [r[at] for r in self.rows(LINK_ROWS_FILE)]
        out: list[Any] = self._cache[key]
        return out

    def notes(self) -> list[NoteRow]:
        """The whole notes table, by note number (decodes every row)."""
        core = self.core()
        stored = self.rows(NOTE_ROWS_FILE)
        if len(stored) != len(core.paths):
            raise IndexFormatError(f"{self.root}: notes.jsonl and notes.json differ in length")
        blobs = self.blobs()
        return [full_note_row(r, core, i, blobs[i], self.chunk_span(i), self.similar(i))
                for i, r in enumerate(stored)]

    def links(self) -> LinkTableRows:
        """The whole link table (decodes every row)."""

        out = self.ints(OUTGOING_FILE)
        ptr, ids = self.ints(BACKLINKS_FILE), self.ints(BACKLINK_IDS_FILE)
        rows = self.rows(LINK_ROWS_FILE)
        return LinkTableRows(
            self._decoded(LINK_ROWS_FILE, lambda: [LinkRow._make(r) for r in rows]),
            [(int(out[i]), int(out[i + 1] - out[i])) for i in range(len(out) - 1)],
            [[int(x) for x in ids[ptr[i]:ptr[i + 1]]] for i in range(len(ptr) - 1)],
            self.json(UNRESOLVED_FILE))

    def chunks(self, shard: str) -> list[ChunkRow]:
        """A shard's chunks, by chunk number (every row)."""

        return [ChunkRow(n, *self.chunk_row(shard, i))
                for i, n in enumerate(self.chunk_notes(shard))]

    def chunk_notes(self, shard: str) -> list[str]:
        """Note path of each chunk of `shard`, by chunk number."""

        key = f"chunk_notes:{shard}"
        if key not in self._cache:
            paths = self.core().paths
            self._cache[key] = chunk_notes(self.json(f"shards/{shard}/{CHUNKS_FILE}"),
                                           [paths[i] for i in self._members().get(shard, [])])
        out: list[str] = self._cache[key]
        return out

    def chunk_lines(self, shard: str) -> Sequence[int]:
        """Every chunk's first and last line, two numbers per chunk."""
        lines = self.ints(f"shards/{shard}/{CHUNK_LINES_FILE}")
        if len(lines) != 2 * self.manifest.shards[shard].chunks:
            raise IndexFormatError(f"{self.root}: shards/{shard}/{CHUNK_LINES_FILE} does "
                                   "not hold two lines per chunk")
        return lines

    def chunk_row(self, shard: str, chunk: int) -> tuple[list[str], int, int]:
        """(heading path, start line, end line) of one chunk."""
        lines = self.chunk_lines(shard)
        lo, hi = int(lines[2 * chunk]), int(lines[2 * chunk + 1])
        number = self.note_numbers()[self.chunk_notes(shard)[chunk]]
        return heading_path(stored_fields(self._stored(number)).headings, lo), lo, hi

    def bm25(self, shard: str) -> Postings | None:
        """The shard's `bm25.Postings`; None for a shard without chunks."""
        # Lazy here and in `vectors`: link queries (backlinks, links, graph) open a reader
        # but never a shard, and these modules cost them ~15 ms of start-up.
        from kbase_ci.index.bm25 import FILES, Postings

        key = f"bm25:{shard}"
        if key not in self._cache:
            base = f"shards/{shard}/bm25/"
            if not self.has(base + FILES[0]):
                return None
            self._cache[key] = Postings(self, base, self.manifest.shards[shard].chunks)
        got: Postings = self._cache[key]
        return got

    def vectors(self, shard: str) -> Vectors | None:
        """The shard's `vectors.Vectors` (memory-mapped); None when it has none."""
        # Lazy: see `bm25`.
        from kbase_ci.index.ann import FILE as GRAPH_FILE
        from kbase_ci.index.ann import SAME_FILE
        from kbase_ci.index.vectors import FILE, Vectors

        rel = f"shards/{shard}/{FILE}"
        if not self.has(rel):
            return None
        key = f"vectors:{rel}"
        if key not in self._cache:
            graph, same = f"shards/{shard}/{GRAPH_FILE}", f"shards/{shard}/{SAME_FILE}"
            self._cache[key] = Vectors(
                self.npy(rel), self.manifest.embeddings.dim,
                (self.path(graph), self.npy(same)) if self.has(graph) and self.has(same)
                else None, self.confirm)
        got: Vectors = self._cache[key]
        return got


def open_index(root: Path, *, verify: bool = True, git_dir: Path | None = None,
               validated: bool = False) -> IndexReader:
    """An index folder, verified (`verify`) and, unless this machine validated an index
    with this manifest before (`schema.trusted`, remembered under `git_dir`) or the
    caller did (`validated`), validated whole (`schema.validate`) first."""
    reader = IndexReader(root, verify=verify)
    if validated:
        return reader
    digest = manifest_digest(reader.base)
    reader.confirm()  # the digest is of the generation the reader pinned
    if not trusted(git_dir, digest):
        # Lazy: the table checks (~5 ms of imports) run once per manifest on a machine;
        # every later query finds it remembered (`trusted`).
        from kbase_ci.index.validation import validate

        validate(reader)
        remember(git_dir, digest)
    return reader
