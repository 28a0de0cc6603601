"""The files of a built index folder, read only after their sha256 matched the manifest.

An index may come from a branch anyone can push to, so nothing here executes or
unpickles anything: JSON, JSON lines and `.npy` arrays of numbers (never objects). A
file that is missing, extra, or differs from the manifest is refused. Opening checks the
listing and the hashes of the small core files every query reads (`CORE_FILES`); any
other file is hashed the first time it is read. Decoded files stay on the object, so a
long-lived process reuses them across queries. The tables built from them are
`reader.IndexReader`'s.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from kbase_ci.errors import IndexFormatError, InputRefused
from kbase_ci.index.integrity import check_listing, mismatch, size_cap
from kbase_ci.index.layout import CORE_FILES
from kbase_ci.index.manifest import (
    MANIFEST_NAME,
    IndexManifest,
    SliceManifest,
    read_manifest,
    sha256,
)
from kbase_ci.index.rowfile import all_rows, int_view, npy_layout, offsets_name, row_at
from kbase_ci.state.bounded import DECODING_FAILURES, read_open, refusal, within_budget
from kbase_ci.state.generations import Pinned

if TYPE_CHECKING:
    import numpy.typing as npt


class IndexFolder:
    """A verified index directory (state: the manifest, the files hashed so far, and the
    files decoded so far)."""

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
        manifest = read_manifest(self.base, shown=self.root)
        if isinstance(manifest, SliceManifest):
            raise IndexFormatError(
                f"{self.root}: this is slice {manifest.slice.k}/{manifest.slice.n} of an "
                "index, not an index: combine the slices with `kbase index --merge`")
        self.manifest: IndexManifest = manifest
        self._verify = verify
        self._checked: set[str] = set()
        self._cache: dict[str, Any] = {}
        if verify:
            check_listing(self.base, self.manifest, shown=self.root)
            for rel in CORE_FILES:
                if rel in self.manifest.files:
                    self.path(rel)
        self.confirm()  # the manifest and the listing were read through `base`

    # -- files ---------------------------------------------------------------------------
    def verify_all(self) -> None:
        """Hash every file now (a branch is checked whole when it is materialised)."""
        for rel in sorted(self.manifest.files):
            self.path(rel)

    def has(self, rel: str) -> bool:
        return rel in self.manifest.files

    def path(self, rel: str) -> Path:
        """`root/rel`, hashed against the manifest the first time it is asked for. A
        library that opens it by this path calls `confirm` afterwards (see
        kbase_ci.state.generations)."""
        want = self.manifest.files.get(rel)
        if want is None:
            raise IndexFormatError(f"{self.root}: the index has no {rel}")
        if self._verify and rel not in self._checked:
            h = hashlib.sha256()
            with self._opened(rel) as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            if h.hexdigest() != want:
                raise mismatch(self.root, rel)
            self._checked.add(rel)
        return self.base / rel

    def _opened(self, rel: str) -> BinaryIO:
        assert self._pin is not None, "read after close"
        return self._pin.open(rel)

    def confirm(self) -> None:
        """ChangedError unless what was read by path so far came from the generation
        this reader pinned (always so on Linux; see kbase_ci.state.generations)."""
        if self._pin is not None:
            self._pin.confirm()

    def data(self, rel: str) -> bytes:
        """A file's bytes (kept), hashed as read."""
        key = f"bytes:{rel}"
        if key not in self._cache:
            want = self.manifest.files.get(rel)
            if want is None:
                raise IndexFormatError(f"{self.root}: the index has no {rel}")
            with self._opened(rel) as fh:  # regular and capped, as the listing found it
                data = self._decoded(rel, lambda: read_open(fh, rel, size_cap(rel)))
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
            if rel not in self.manifest.files:
                raise IndexFormatError(f"{self.root}: the index has no {rel}")
            with self._opened(rel) as fh:
                size = os.fstat(fh.fileno()).st_size
                self._cache[key] = (mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                                    if size else b"")
        out: bytes | mmap.mmap = self._cache[key]
        return out

    def close(self) -> None:
        """Let a build delete this generation (also done when the reader is collected)."""
        if self._pin is not None:
            self._pin.close()

    def _decoded(self, rel: str, decode: Callable[[], Any], raw: bytes | None = None) -> Any:
        """`decode()` (of JSON `raw`: within the reader's budget, kbase_ci.state.bounded),
        with any failure to decode `rel` (bad JSON, nesting, a shifted offset, a
        truncated array, no memory) an IndexFormatError naming it: never a crash."""
        try:
            if raw is not None:
                within_budget(raw, rel)
            return decode()
        except InputRefused as exc:
            what = exc.detail.removesuffix("; not read")
        except DECODING_FAILURES as exc:
            what = refusal(rel, exc).detail.removesuffix("; not read")
        except (ValueError, TypeError, IndexError, KeyError, OverflowError) as exc:
            what = f"{type(exc).__name__}: {exc}"[:200]
        raise IndexFormatError(f"{self.root}: {rel} cannot be read ({what}): the index "
                               "is damaged or forged")

    def json(self, rel: str) -> Any:
        key = f"json:{rel}"
        if key not in self._cache:
            data = self.data(rel)
            self._cache[key] = self._decoded(rel, lambda: json.loads(data), data)
        return self._cache[key]

    def npy(self, rel: str) -> npt.NDArray[Any]:
        """A `.npy` array of numbers, memory-mapped (read-only), never unpickled."""
        key = f"npy:{rel}"
        if key not in self._cache:
            import mmap

            import numpy as np

            self.path(rel)
            with self._opened(rel) as fh:
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
            except (ValueError, TypeError) as exc:  # a shape its bytes cannot hold
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
            self._cache[key] = self._decoded(rel, lambda: all_rows(data), data)
        out: list[Any] = self._cache[key]
        return out
