"""Open a built index: check the format version, then the sha256 of every file against
the manifest before trusting a byte of it.

An index may come from a branch anyone can push to, so nothing here executes or
unpickles anything: JSON, JSON lines and `.npy` arrays of numbers (never objects). A
file that is missing, extra, or differs from the manifest is refused.

Hashing a whole 10k-note index costs more than answering a query, so opening checks the
listing (no file missing, none extra) and the hashes of the small core files every query
reads (`CORE_FILES`); any other file is hashed the first time this reader reads it. Decoded
tables stay on the reader, so a long-lived process reuses them across queries.
"""

from __future__ import annotations

import json
import mmap
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.errors import IndexFormatError
from kbase_ci.index.ann import FILE as GRAPH_FILE
from kbase_ci.index.ann import SAME_FILE
from kbase_ci.index.bm25 import FILES, Postings
from kbase_ci.index.integrity import (
    check_listing,
    manifest_digest,
    mismatch,
    remember,
    trusted,
)
from kbase_ci.index.layout import (
    BACKLINK_IDS_FILE,
    BACKLINKS_FILE,
    BLOBS_FILE,
    CHUNK_FIELDS,
    CHUNK_LINES_FILE,
    CHUNKS_FILE,
    CORE_FILES,
    LINK_FIELDS,
    LINK_ROWS_FILE,
    NAMES_FILE,
    NOTE_FIELDS,
    NOTE_ROWS_FILE,
    NOTES_FILE,
    OUTGOING_FILE,
    SIMILAR_FILE,
    SIMILAR_SCORES_FILE,
    UNRESOLVED_FILE,
)
from kbase_ci.index.manifest import MANIFEST_NAME, read_manifest, sha256, sha256_file
from kbase_ci.index.notetable import (
    blob_list,
    chunk_notes,
    chunk_spans,
    full_note_row,
    heading_path,
    shard_notes,
    similar_list,
)
from kbase_ci.index.rowfile import all_rows, int_view, npy_layout, offsets_name, row_at
from kbase_ci.index.schema import validate
from kbase_ci.index.vectors import FILE, Vectors
from kbase_ci.vault.generations import Pinned

if TYPE_CHECKING:
    import numpy.typing as npt



class IndexReader:
    """A verified index directory (state: the manifest, the files hashed so far, and the
    tables decoded so far)."""

    def __init__(self, root: Path, *, verify: bool = True) -> None:
        self.root = Path(root)
        """The folder, as named in messages."""
        try:  # this generation, even if a build swaps another one in meanwhile
            self._pin: Pinned | None = Pinned(self.root, MANIFEST_NAME)
        except FileNotFoundError:
            raise IndexFormatError(f"{self.root / MANIFEST_NAME}: no index here "
                                   "(manifest.json is missing)") from None
        except NotADirectoryError:
            raise IndexFormatError(f"{self.root}: not an index folder") from None
        self.base = self._pin.path
        """Where its files are read: the pinned generation."""
        self.manifest = read_manifest(self.base, shown=self.root)
        if "slice" in self.manifest:
            sl = self.manifest["slice"]
            raise IndexFormatError(
                f"{self.root}: this is slice {sl.get('k')}/{sl.get('n')} of an index, not an "
                "index: combine the slices with `kbase index --merge`")
        self._verify = verify
        self._checked: set[str] = set()
        self._cache: dict[str, Any] = {}
        if verify:
            check_listing(self.base, self.manifest, shown=self.root)
            for rel in CORE_FILES:
                if rel in self.manifest["files"]:
                    self.path(rel)

    # -- files ---------------------------------------------------------------------------
    def verify_all(self) -> None:
        """Hash every file now (a branch is checked whole when it is materialised)."""
        for rel in sorted(self.manifest["files"]):
            self.path(rel)

    def has(self, rel: str) -> bool:
        return rel in self.manifest["files"]

    def path(self, rel: str) -> Path:
        """`root/rel`, hashed against the manifest the first time it is asked for."""
        want = self.manifest["files"].get(rel)
        if want is None:
            raise IndexFormatError(f"{self.root}: the index has no {rel}")
        path = self.base / rel
        if self._verify and rel not in self._checked:
            if sha256_file(path) != want:
                raise mismatch(self.root, rel)
            self._checked.add(rel)
        return path

    def data(self, rel: str) -> bytes:
        """A file's bytes (kept), hashed as read."""
        key = f"bytes:{rel}"
        if key not in self._cache:
            want = self.manifest["files"].get(rel)
            if want is None:
                raise IndexFormatError(f"{self.root}: the index has no {rel}")
            data = (self.base / rel).read_bytes()
            if self._verify and rel not in self._checked:
                if sha256(data) != want:
                    raise mismatch(self.root, rel)
                self._checked.add(rel)
            self._cache[key] = data
        blob: bytes = self._cache[key]
        return blob

    def buffer(self, rel: str) -> bytes | mmap.mmap:
        """A file's bytes for random access: memory-mapped once its hash is trusted (a
        query reads a few hundred postings of a shard, not its whole file), else read and
        hashed like `data`."""
        key = f"buf:{rel}"
        if key not in self._cache:
            if self._verify and rel not in self._checked:
                return self.data(rel)
            if rel not in self.manifest["files"]:
                raise IndexFormatError(f"{self.root}: the index has no {rel}")
            with (self.base / rel).open("rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                self._cache[key] = (mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                                    if size else b"")
        out: bytes | mmap.mmap = self._cache[key]
        return out

    def close(self) -> None:
        """Let a build delete this generation (also done when the reader is collected)."""
        if self._pin is not None:
            self._pin.close()

    def _decoded(self, rel: str, decode: Callable[[], Any]) -> Any:
        """`decode()`, with any failure to decode `rel` (bad JSON, nesting, a shifted
        offset, a truncated array) an IndexFormatError naming it: never a crash."""
        try:
            return decode()
        except (ValueError, TypeError, IndexError, KeyError, RecursionError,
                OverflowError, MemoryError) as exc:
            what = "nested too deeply" if isinstance(exc, RecursionError) else \
                f"{type(exc).__name__}: {exc}"[:200]
            raise IndexFormatError(f"{self.root}: {rel} cannot be read ({what}): the index "
                                   "is damaged or forged") from None

    def json(self, rel: str) -> Any:
        key = f"json:{rel}"
        if key not in self._cache:
            data = self.data(rel)
            self._cache[key] = self._decoded(rel, lambda: json.loads(data))
        return self._cache[key]

    def npy(self, rel: str) -> npt.NDArray[Any]:
        """A `.npy` array of numbers, memory-mapped (read-only), never unpickled."""
        key = f"npy:{rel}"
        if key not in self._cache:
            import mmap

            import numpy as np

            path = self.path(rel)
            with path.open("rb") as fh:
                layout = npy_layout(fh.read(256))
                if layout is None:
                    raise IndexFormatError(f"{self.root}: {rel} is not an array of numbers "
                                           "as kbase writes them")
                descr, shape, start = layout
                count = 1
                for n in shape:
                    count *= n
                buf: Any = (mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                            if count else b"")
            try:
                arr = np.frombuffer(buf, dtype=np.dtype(descr), count=count,
                                    offset=start if count else 0).reshape(shape)
            except ValueError as exc:
                raise IndexFormatError(f"{self.root}: {rel}: {exc}") from None
            self._cache[key] = arr
        out: npt.NDArray[Any] = self._cache[key]
        return out

    def ints(self, rel: str) -> Sequence[int]:
        """A one-dimensional integer `.npy` (offsets, pointers, ids) as a sequence;
        without numpy when the file allows (see `rowfile.int_view`)."""
        key = f"ints:{rel}"
        if key not in self._cache:
            buf = self.buffer(rel)
            got = self._decoded(rel, lambda: int_view(buf))
            if got is None:
                got = self.npy(rel)
                if got.ndim != 1 or got.dtype.kind not in "iu":
                    raise IndexFormatError(f"{self.root}: {rel} is not a list of integers")
            self._cache[key] = got
        out: Sequence[int] = self._cache[key]
        return out

    def row(self, rel: str, i: int) -> Any:
        """Row `i` of the row file `rel` (a `.jsonl` with its offsets)."""
        data, offsets = self.data(rel), self.ints(offsets_name(rel))
        return self._decoded(rel, lambda: row_at(data, offsets, i))

    def rows(self, rel: str) -> list[Any]:
        key = f"rows:{rel}"
        if key not in self._cache:
            data = self.data(rel)
            self._cache[key] = self._decoded(rel, lambda: all_rows(data))
        out: list[Any] = self._cache[key]
        return out

    # -- tables --------------------------------------------------------------------------
    @property
    def shards(self) -> list[str]:
        return sorted(self.manifest.get("shards", {}))

    def core(self) -> dict[str, Any]:
        """`notes.json`: paths, groups (row order = note number), statuses, similar_k."""
        out: dict[str, Any] = self.json(NOTES_FILE)
        return out

    def blobs(self) -> list[str]:
        """Blob id per note number (what the freshness check compares)."""
        if "blobs" not in self._cache:
            core = self.core()
            values: Any = None
            if "blob_bytes" in core:
                values = int_view(self.data(BLOBS_FILE))
                if values is None:  # a big-endian host: numpy reads it
                    values = self.npy(BLOBS_FILE).tobytes()
            self._cache["blobs"] = blob_list(core, values)
        out: list[str] = self._cache["blobs"]
        return out

    def similar(self, number: int) -> list[list[float]]:
        """Note `number`'s similar list: [[note number, score], ...], best first."""
        k = int(self.core()["similar_k"])
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
            shard = core["groups"][core["group"][number]][0]
            if shard in self.manifest.get("shards", {}):
                counts = self.json(f"shards/{shard}/{CHUNKS_FILE}").get("counts")
                spans.update(chunk_spans(self._members()[shard], counts or []))
            spans.setdefault(number, [0, 0])
        return spans[number]

    def note_numbers(self) -> dict[str, int]:
        """path -> note number (row)."""
        if "numbers" not in self._cache:
            self._cache["numbers"] = {p: i for i, p in enumerate(self.core()["paths"])}
        out: dict[str, int] = self._cache["numbers"]
        return out

    def names(self) -> dict[str, list[int]]:
        """casefolded title or alias -> note numbers."""
        out: dict[str, list[int]] = self.json(NAMES_FILE)
        return out

    def note_row(self, number: int) -> list[Any]:
        """Row `number` of the notes table (`tables.NOTE_FIELDS`)."""

        key = f"rows:{NOTE_ROWS_FILE}"
        stored = self._cache[key][number] if key in self._cache else \
            self.row(NOTE_ROWS_FILE, number)
        return full_note_row(stored, self.core(), number, self.blobs()[number],
                             self.chunk_span(number), self.similar(number))

    def link_row(self, number: int) -> list[Any]:
        key = f"rows:{LINK_ROWS_FILE}"
        if key in self._cache:
            return list(self._cache[key][number])
        return list(self.row(LINK_ROWS_FILE, number))

    def notes(self) -> dict[str, Any]:
        """The whole notes table as {fields, rows, similar_k} (decodes every row)."""
        core = self.core()
        stored = self.rows(NOTE_ROWS_FILE)
        if len(stored) != len(core["paths"]):
            raise IndexFormatError(f"{self.root}: notes.jsonl and notes.json differ in length")
        blobs = self.blobs()
        rows = [full_note_row(r, core, i, blobs[i], self.chunk_span(i), self.similar(i))
                for i, r in enumerate(stored)]
        return {"fields": list(NOTE_FIELDS), "rows": rows, "similar_k": core["similar_k"]}

    def links(self) -> dict[str, Any]:
        """The whole link table as {fields, rows, outgoing, backlinks, unresolved}."""

        out = self.ints(OUTGOING_FILE)
        ptr, ids = self.ints(BACKLINKS_FILE), self.ints(BACKLINK_IDS_FILE)
        return {"fields": list(LINK_FIELDS), "rows": self.rows(LINK_ROWS_FILE),
                "outgoing": [[int(out[i]), int(out[i + 1] - out[i])]
                             for i in range(len(out) - 1)],
                "backlinks": [[int(x) for x in ids[ptr[i]:ptr[i + 1]]]
                              for i in range(len(ptr) - 1)],
                "unresolved": self.json(UNRESOLVED_FILE)}

    def chunks(self, shard: str) -> dict[str, Any]:
        """A shard's chunk table as {fields, rows} (every row)."""

        notes = self.chunk_notes(shard)
        return {"fields": list(CHUNK_FIELDS),
                "rows": [[n, *self.chunk_row(shard, i)] for i, n in enumerate(notes)]}

    def chunk_notes(self, shard: str) -> list[str]:
        """Note path of each chunk of `shard`, by chunk number."""

        key = f"chunk_notes:{shard}"
        if key not in self._cache:
            paths = self.core()["paths"]
            self._cache[key] = chunk_notes(self.json(f"shards/{shard}/{CHUNKS_FILE}"),
                                           [paths[i] for i in self._members().get(shard, [])])
        out: list[str] = self._cache[key]
        return out

    def chunk_lines(self, shard: str) -> Sequence[int]:
        """Every chunk's first and last line, two numbers per chunk."""
        lines = self.ints(f"shards/{shard}/{CHUNK_LINES_FILE}")
        if len(lines) != 2 * int(self.manifest["shards"][shard]["chunks"]):
            raise IndexFormatError(f"{self.root}: shards/{shard}/{CHUNK_LINES_FILE} does "
                                   "not hold two lines per chunk")
        return lines

    def chunk_row(self, shard: str, chunk: int) -> tuple[list[str], int, int]:
        """(heading path, start line, end line) of one chunk."""
        lines = self.chunk_lines(shard)
        lo, hi = int(lines[2 * chunk]), int(lines[2 * chunk + 1])
        number = self.note_numbers()[self.chunk_notes(shard)[chunk]]
        key = f"rows:{NOTE_ROWS_FILE}"
        stored = self._cache[key][number] if key in self._cache else \
            self.row(NOTE_ROWS_FILE, number)
        heads = stored[1] if len(stored) > 1 else []
        return heading_path(heads, lo), lo, hi

    def bm25(self, shard: str) -> Any:
        """The shard's `bm25.Postings`; None for a shard without chunks."""

        key = f"bm25:{shard}"
        if key not in self._cache:
            base = f"shards/{shard}/bm25/"
            if not self.has(base + FILES[0]):
                return None
            self._cache[key] = Postings(self, base, int(self.manifest["shards"][shard]["chunks"]))
        return self._cache[key]

    def vectors(self, shard: str) -> Any:
        """The shard's `vectors.Vectors` (memory-mapped); None when it has none."""

        rel = f"shards/{shard}/{FILE}"
        if not self.has(rel):
            return None
        key = f"vectors:{rel}"
        if key not in self._cache:
            dim = (self.manifest.get("embeddings") or {}).get("dim")
            graph, same = f"shards/{shard}/{GRAPH_FILE}", f"shards/{shard}/{SAME_FILE}"
            self._cache[key] = Vectors(
                self.npy(rel), dim if isinstance(dim, int) else None,
                (self.path(graph), self.npy(same)) if self.has(graph) and self.has(same)
                else None)
        return self._cache[key]


def open_index(root: Path, *, verify: bool = True, git_dir: Path | None = None,
               validated: bool = False) -> IndexReader:
    """An index folder, verified (`verify`) and, unless this machine validated an index
    with this manifest before (`schema.trusted`, remembered under `git_dir`) or the
    caller did (`validated`), validated whole (`schema.validate`) first."""
    reader = IndexReader(root, verify=verify)
    if validated:
        return reader
    digest = manifest_digest(reader.base)
    if not trusted(git_dir, digest):
        validate(reader)
        remember(git_dir, digest)
    return reader
