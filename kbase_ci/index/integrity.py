"""Whether an index folder is what its manifest says, before anything is decoded: the
listing (no file missing, none extra, no symbolic link), the size caps, the hashes, and
the memory of which manifests passed the full validation (`schema.validate`) here.

The index branch is written by whoever can push to it, and `.kbase/` may be committed
by a PR. Sizes are checked before any file is read: a 1.5 GB blob on the branch is
refused by its size, not read into memory. A manifest that passed `schema.validate` is
remembered by its sha256 in the `validated` memo of the state store under the git dir
(kbase_ci.state.memos): it pins every file's hash, and readers hash each file they read
against it, so a remembered index needs no second validation. An index branch refused
here is remembered too (`refused` memo), by its git tree id, which pins every byte of it:
the same tree is refused again from the memo, with the same reason, before a byte of it
is read (a refused 7.6 GiB branch cost each query 77 s of streaming and hashing).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kbase_ci import __version__
from kbase_ci.errors import IndexFormatError
from kbase_ci.index.layout import SCOPES_DIR
from kbase_ci.index.manifest import MANIFEST_NAME, MAX_MANIFEST_BYTES, Manifest, sha256_file
from kbase_ci.state.bounded import read_input
from kbase_ci.state.folders import GIT_HIDE
from kbase_ci.vault.safefs import entries, foreign_in

if TYPE_CHECKING:
    from kbase_ci.state.memos import StateStore

MAX_JSON_BYTES = 256 << 20
"""A JSON table is decoded whole: 256 MiB of JSON is ~2.5 GB of Python objects."""
MAX_FILE_BYTES = 2 << 30
"""Any other file (memory-mapped arrays)."""
MAX_TOTAL_BYTES = 8 << 30
def size_cap(rel: str) -> int:
    return MAX_JSON_BYTES if rel.endswith((".json", ".jsonl")) else MAX_FILE_BYTES


def check_sizes(where: str, sizes: dict[str, int]) -> None:
    """IndexFormatError for a file (or all of them) above its cap, before any is read."""
    for rel, size in sorted(sizes.items()):
        if size > size_cap(rel):
            raise IndexFormatError(f"{where}: {rel} is {size} bytes, more than the "
                                   f"{size_cap(rel)} an index file may have")
    if sum(sizes.values()) > MAX_TOTAL_BYTES:
        raise IndexFormatError(f"{where}: the index holds more than {MAX_TOTAL_BYTES} bytes")


def check_listing(root: Path, manifest: Manifest, *, allow_extra: bool = False,
                  shown: Path | None = None) -> None:
    """Raise IndexFormatError unless the files under `root` are the manifest's (names
    only; `verify_files` also compares contents), none of them a symbolic link (which
    could lead a read outside the index) and none above its size cap (`schema`).
    `shown`: the folder to name in errors."""
    where = shown if shown is not None else root
    files = manifest.files
    found = entries(root)  # one walk: each file's lstat, for all three checks
    for rel in sorted(files):  # each a path inside the index (`blocks.IndexPath`)
        st = found.get(rel)
        if (st is None or not stat.S_ISREG(st.st_mode)) and not (root / rel).is_file():
            raise IndexFormatError(f"{where}: file {rel} is missing: the index is incomplete")
    # GIT_HIDE: a swap writes it into the generation it replaced, which a reader opening
    # at that moment may still be checking.
    foreign = foreign_in(found, lambda rel: allow_extra or rel in (MANIFEST_NAME, GIT_HIDE)
                         or rel in files or rel.startswith(SCOPES_DIR))
    if foreign is not None:  # scoped indexes: each checked by its own manifest
        why = "is a symbolic link or not a file" if (root / foreign).is_symlink() or \
            not (root / foreign).is_file() else "is not in the manifest"
        raise IndexFormatError(f"{where}: file {foreign} {why}: the index was modified")
    sizes = {rel: found[rel].st_size for rel in files if rel in found}
    check_sizes(str(where), sizes if len(sizes) == len(files) else file_sizes(root, list(files)))


def mismatch(root: Path, rel: str) -> IndexFormatError:
    return IndexFormatError(f"{root}: file {rel} does not match the manifest: the index "
                            "was modified")


def verify_files(root: Path, manifest: Manifest, *, allow_extra: bool = False) -> None:
    """Raise IndexFormatError unless the files under `root` are exactly the manifest's."""
    check_listing(root, manifest, allow_extra=allow_extra)
    for rel, want in sorted(manifest.files.items()):
        if sha256_file(root / rel) != want:
            raise mismatch(root, rel)


def manifest_digest(root: Path) -> str | None:
    try:
        raw = read_input(root / MANIFEST_NAME, MAX_MANIFEST_BYTES, follow_links=False)
        return hashlib.sha256(raw).hexdigest()
    except OSError:
        return None


def trusted(git_dir: Path | None, digest: str | None) -> bool:
    """Whether an index with this manifest was validated on this machine."""
    return git_dir is not None and digest is not None and \
        _store(git_dir).get("validated", digest) is not None


def remember(git_dir: Path | None, digest: str | None) -> None:
    """Note that the index with this manifest passed `validate` (or was built here); a
    read-only git dir remembers nothing (validated again next time)."""
    if git_dir is not None and digest is not None:
        _store(git_dir).put("validated", digest, "")


def _store(git_dir: Path) -> StateStore:
    # Lazy: the state store is SQLite (~10 M instructions to import); an index read from
    # a materialised branch, validated when it was unpacked, never asks it.
    from kbase_ci.state.memos import state_store

    return state_store(git_dir / "kbase")


def _refusal_key(tree: str) -> str:
    return f"{tree}@{__version__}"  # another kbase may judge the same bytes otherwise


def refused_before(git_dir: Path | None, tree: str) -> str | None:
    """Why the index branch tree `tree` was refused on this machine, or None."""
    if git_dir is None or not tree:
        return None
    return _store(git_dir).get("refused", _refusal_key(tree))


def remember_refusal(git_dir: Path | None, tree: str, why: str) -> None:
    """Note that tree `tree` is not a valid index (a read-only git dir: not noted)."""
    if git_dir is not None and tree:
        _store(git_dir).put("refused", _refusal_key(tree), why)


def file_sizes(root: Path, files: Sequence[str]) -> dict[str, int]:
    out = {}
    for rel in files:
        try:
            out[rel] = os.stat(root / rel).st_size
        except OSError:
            out[rel] = 0  # missing: the listing check names it
    return out
