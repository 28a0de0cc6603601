"""Open a built index: check the format version and every file's sha256 against the
manifest before trusting a byte of it.

An index may come from a branch anyone can push to, so nothing here executes or
unpickles anything: JSON, `.npy` loaded with `allow_pickle=False` (bm25s's default), and
usearch files. A file that is missing, extra, or differs from the manifest is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import IndexFormatError
from .manifest import MANIFEST_NAME, read_manifest, sha256_file
from .shardbuild import CHUNKS_FILE

NOTES_FILE = "notes.json"
LINKS_FILE = "links.json"


def verify_files(root: Path, manifest: dict[str, Any], *, allow_extra: bool = False) -> None:
    """Raise IndexFormatError unless the files under `root` are exactly the manifest's."""
    files: dict[str, str] = manifest["files"]
    for rel in sorted(files):
        path = root / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise IndexFormatError(f"{root}: manifest names a file outside the index: {rel}")
        if not path.is_file():
            raise IndexFormatError(f"{root}: file {rel} is missing: the index is incomplete")
        if sha256_file(path) != files[rel]:
            raise IndexFormatError(
                f"{root}: file {rel} does not match the manifest: the index was modified")
    if allow_extra:
        return
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and rel != MANIFEST_NAME and rel not in files:
            raise IndexFormatError(
                f"{root}: file {rel} is not in the manifest: the index was modified")


class IndexReader:
    """A verified index directory (state: the manifest and the tables read so far)."""

    def __init__(self, root: Path, *, verify: bool = True) -> None:
        self.root = Path(root)
        self.manifest = read_manifest(self.root)
        if "slice" in self.manifest:
            sl = self.manifest["slice"]
            raise IndexFormatError(
                f"{self.root}: this is slice {sl.get('k')}/{sl.get('n')} of an index, not an "
                "index: combine the slices with `kbase index --merge`")
        if verify:
            verify_files(self.root, self.manifest)
        self._cache: dict[str, Any] = {}

    def _json(self, rel: str) -> Any:
        if rel not in self._cache:
            if rel not in self.manifest["files"]:
                raise IndexFormatError(f"{self.root}: the index has no {rel}")
            self._cache[rel] = json.loads((self.root / rel).read_bytes())
        return self._cache[rel]

    @property
    def shards(self) -> list[str]:
        return sorted(self.manifest.get("shards", {}))

    def notes(self) -> dict[str, Any]:
        return dict(self._json(NOTES_FILE))

    def links(self) -> dict[str, Any]:
        return dict(self._json(LINKS_FILE))

    def chunks(self, shard: str) -> dict[str, Any]:
        return dict(self._json(f"shards/{shard}/{CHUNKS_FILE}"))

    def chunk_notes(self, shard: str) -> list[str]:
        """Note path of each chunk of `shard`, by chunk number."""
        from .shardbuild import chunk_notes

        return chunk_notes(self.chunks(shard))

    def bm25(self, shard: str) -> Any:
        """bm25s.BM25 for the shard, memory-mapped; None for a shard without chunks."""
        from .bm25 import load_bm25

        if f"shards/{shard}/bm25/params.index.json" not in self.manifest["files"]:
            return None
        return load_bm25(self.root / "shards" / shard / "bm25")

    def vectors(self, shard: str) -> Any:
        """usearch Index opened with view=True; None when the index has no vectors."""
        from .vectors import FILE, load_vectors

        rel = f"shards/{shard}/{FILE}"
        if rel not in self.manifest["files"]:
            return None
        return load_vectors(self.root / rel)


def open_index(root: Path, *, verify: bool = True) -> IndexReader:
    return IndexReader(root, verify=verify)
