"""What the previous index at the target says, for an incremental build: its similar
lists and the note vectors they were computed from (what an incremental build makes of
them: kbase_ci.index.similar, `similar_inputs`).

Only files whose sha256 matches the previous manifest are used; anything missing,
modified, or built with another model or `similar` setting means "recompute it all".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kbase_ci.errors import IndexFormatError, InputRefused
from kbase_ci.index.integrity import size_cap
from kbase_ci.index.layout import (
    BLOBS_FILE,
    CHUNKS_FILE,
    NOTE_ROWS_FILE,
    NOTES_FILE,
    SIMILAR_FILE,
    SIMILAR_SCORES_FILE,
)
from kbase_ci.index.manifest import IndexManifest, sha256
from kbase_ci.index.rowfile import all_rows, int_view
from kbase_ci.index.storednotes import (
    blob_list,
    chunk_spans,
    shard_notes,
    similar_list,
)
from kbase_ci.index.vectors import FILE as VECTORS_FILE
from kbase_ci.index.vectors import Vectors
from kbase_ci.state.bounded import decode_json, read_input
from kbase_ci.typedjson import ShapeError
from kbase_ci.vault.indextables import NotesCore, read_core, stored_fields

Row = list[list[float]]


class PreviousIndex:
    """A previous index (state: its manifest and the tables read so far)."""

    def __init__(self, root: Path, manifest: IndexManifest) -> None:
        self.root = root
        self.manifest = manifest
        self._rows: tuple[list[Any], list[bytes]] | None = None
        self._decoded: dict[str, Any] = {}

    def note_rows(self) -> tuple[list[Any], list[bytes]] | None:
        """The previous `notes.jsonl`: its rows as stored (`notetable.STORED_NOTE_FIELDS`)
        and each row's line as written (without the newline); None when the files do not
        match the manifest."""
        if self._rows is None:
            data = self.data(NOTE_ROWS_FILE)
            core = self.core()
            if data is None or core is None:
                return None
            rows, lines = all_rows(data), data.split(b"\n")[:-1]
            if not len(rows) == len(lines) == len(core.paths):
                return None
            self._rows = (rows, lines)
        return self._rows

    def core(self) -> NotesCore | None:
        """The previous `notes.json`, with `blobs` (hex per note) put back from
        `blobs.npy`; None when a file does not match the manifest or its shape."""
        if "core" not in self._decoded:
            out = None
            try:
                core = read_core(self.json(NOTES_FILE))
                values = self.data(BLOBS_FILE) if core.blob_bytes is not None else None
                view = int_view(values) if values is not None else None
                out = core._replace(blobs=blob_list(core, view))
            except (ShapeError, IndexFormatError):
                out = None
            self._decoded["core"] = out
        got: NotesCore | None = self._decoded["core"]
        return got

    def similar_lists(self, k: int) -> list[list[list[float]]] | None:
        """Every previous similar list; None when the files do not match."""
        core = self.core()
        ids, scores = self.data(SIMILAR_FILE), self.data(SIMILAR_SCORES_FILE)
        if core is None or ids is None or scores is None:
            return None
        id_view, score_view = int_view(ids), int_view(scores)
        n = len(core.paths)
        if id_view is None or score_view is None or not len(id_view) == len(score_view) == n * k:
            return None
        return [similar_list(id_view, score_view, k, i) for i in range(n)]

    def vector_rows(self, paths: Sequence[str], blobs: Mapping[str, str],
                    vectors_inputs: str | None) -> dict[str, bytes]:
        """The stored vector rows of the notes among `paths` whose blob is unchanged,
        when the previous vectors were computed the same way (`vectors_inputs`,
        `shardbuild.vectors_digest`): what an incremental build copies instead of
        embedding. Notes whose shard files do not match the manifest are left out."""
        old = self.manifest.vectors
        core = self.core()
        if vectors_inputs is None or old is None or old.inputs != vectors_inputs \
                or core is None:
            return {}
        number = self._numbers()
        groups, group = core.groups, core.group
        wanted: dict[str, list[int]] = {}
        for p in paths:
            i = number.get(p)
            if i is not None and (core.blobs or [])[i] == blobs.get(p):
                wanted.setdefault(groups[group[i]][0], []).append(i)
        out: dict[str, bytes] = {}
        for sid, numbers in sorted(wanted.items()):
            got = self.shard_vectors(sid)
            spans, vecs = got if got is not None else ({}, None)
            if vecs is None:
                continue
            for i in numbers:
                first, count = spans[i]
                if count:
                    out[core.paths[i]] = vecs.packed[first:first + count].tobytes()
        return out

    def blob_sizes(self) -> dict[str, int]:
        """Size by blob id of the previous index's notes ({} when unreadable)."""
        got, core = self.note_rows(), self.core()
        if got is None or core is None:
            return {}
        # The rows are as stored (only hashed, not validated): a size that is not an
        # integer is left out.
        return {blob: size for blob, row in zip(core.blobs or [], got[0], strict=True)
                if isinstance(row, list) and row
                and isinstance(size := stored_fields(row).size, int)}

    def _numbers(self) -> dict[str, int]:
        if "numbers" not in self._decoded:
            core = self.core()
            self._decoded["numbers"] = {p: i for i, p in enumerate(core.paths)} \
                if core is not None else {}
        got: dict[str, int] = self._decoded["numbers"]
        return got

    def shard_vectors(self, sid: str) -> tuple[dict[int, list[int]], Vectors | None] | None:
        """(note number -> [first chunk, count], the shard's vectors, or None when it has
        no `vectors.npy`) of a previous shard, its files checked against the manifest and
        read once; None when they do not match (or do not fit together)."""
        key = f"shard:{sid}"
        if key not in self._decoded:
            self._decoded[key] = self._read_shard_vectors(sid)
        got: tuple[dict[int, list[int]], Vectors | None] | None = self._decoded[key]
        return got

    def _read_shard_vectors(self, sid: str
                            ) -> tuple[dict[int, list[int]], Vectors | None] | None:
        import io

        import numpy as np

        core, chunks = self.core(), self.json(f"shards/{sid}/{CHUNKS_FILE}")
        if core is None or not isinstance(chunks, dict):
            return None
        if "members" not in self._decoded:
            self._decoded["members"] = shard_notes(core)
        try:
            spans = chunk_spans(self._decoded["members"].get(sid, []),
                                chunks.get("counts") or [])
        except IndexFormatError:
            return None
        rel = f"shards/{sid}/{VECTORS_FILE}"
        if rel not in self.manifest.files:
            return spans, None
        data = self.data(rel)
        if data is None:
            return None
        packed = np.load(io.BytesIO(data), allow_pickle=False)
        rows = sum(c for _, c in spans.values())
        if packed.dtype != np.uint8 or packed.ndim != 2 or len(packed) != rows:
            return None
        return spans, Vectors(packed, self.manifest.embeddings.dim)

    def data(self, rel: str) -> bytes | None:
        """A file's bytes when they match the previous manifest, else None."""
        want = self.manifest.files.get(rel)
        try:  # no link, no FIFO, capped as an index file (kbase_ci.state.bounded)
            data = read_input(self.root / rel, size_cap(rel), follow_links=False)
        except OSError:  # InputRefused included
            return None
        return data if want is not None and sha256(data) == want else None

    def json(self, rel: str) -> Any:
        """A JSON file's value when its bytes match the previous manifest, else None;
        read and hashed once (notes.json is asked for by the links, similar-list and
        concepts stages), so callers must not modify what they get."""
        if rel not in self._decoded:
            data = self.data(rel)
            try:
                self._decoded[rel] = None if data is None else decode_json(data, rel)
            except InputRefused:  # matches its manifest, yet no JSON: recompute it all
                self._decoded[rel] = None
        return self._decoded[rel]

    def changed_notes(self, paths: Sequence[str], blobs: Mapping[str, str]) -> set[int] | None:
        """Numbers of the notes whose blob differs from the previous index's, when it has
        exactly the notes `paths` in that order (so note numbers mean the same in both);
        None otherwise."""
        core = self.core()
        if core is None or core.paths != list(paths):
            return None
        old = core.blobs or []
        if not isinstance(old, list) or len(old) != len(paths):
            return None
        return {i for i, (p, was) in enumerate(zip(paths, old, strict=True))
                if was != blobs.get(p, "")}
