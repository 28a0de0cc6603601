"""The index directory as it will be published: verified file by file, with git ids.

The manifest lists the sha256 of every file; publishing exactly those files (plus the
manifest) means a stray file left in the directory is never shipped, and a tampered or
half-written one is refused before anything reaches the branch.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from kbase_ci.errors import IndexFormatError, InputRefused, UsageError
from kbase_ci.git.objects import object_id
from kbase_ci.index.integrity import size_cap
from kbase_ci.index.manifest import MANIFEST_NAME as MANIFEST
from kbase_ci.index.manifest import MAX_MANIFEST_BYTES, IndexManifest, decode_manifest
from kbase_ci.state.bounded import read_input
from kbase_ci.vault.safefs import links_between

TRAILER = "Kbase-Source-Commit"


@dataclass(frozen=True, slots=True)
class LocalIndex:
    """A verified index directory, with the git object id of every file to publish."""

    format_version: int
    source_commit: str | None
    dirty: bool
    built_at: str
    kbase_version: str
    blobs: dict[str, str]
    """relpath -> git blob id, manifest.json included."""
    ignored: tuple[str, ...]
    """Files in the directory that the manifest does not list: not published."""
    scope_of: str | None = None
    """A scoped index: the digest of the main index's manifest it was cut from."""

    def commit_message(self) -> str:
        """Deterministic for a given manifest, so equal publishes write equal commits."""
        src = self.source_commit or "none"
        lines = [f"kbase index of {src[:12]}", "",
                 f"Built by kbase {self.kbase_version or '?'} (index format "
                 f"{self.format_version}), {len(self.blobs)} files.", "",
                 f"{TRAILER}: {src}", f"Kbase-Index-Format: {self.format_version}"]
        if self.dirty:
            lines.append("Kbase-Source-Dirty: true")
        return "\n".join(lines) + "\n"


def _safe_relpath(rel: object) -> str:
    if not isinstance(rel, str) or not rel or "\\" in rel or "\n" in rel:
        raise IndexFormatError(f"manifest lists a bad file name: {rel!r}")
    parts = PurePosixPath(rel).parts
    if rel.startswith("/") or any(p in ("", ".", "..", ".git") for p in parts) \
            or "/".join(parts) != rel:
        raise IndexFormatError(f"manifest lists a bad file name: {rel!r}")
    return rel


def _scope_blobs(index_dir: Path, main_digest: str, fmt: str) -> dict[str, str]:
    """Scoped indexes in `scopes/NAME/` (kbase_ci/scope) ship with the index, each verified
    against its own manifest; a stale one (cut from another main index) does not."""
    out: dict[str, str] = {}
    base = index_dir / "scopes"
    if not base.is_dir():
        return out
    for entry in sorted(base.iterdir()):
        if entry.is_symlink() or not (entry / MANIFEST).is_file():
            continue
        try:
            scoped = load_index(entry, fmt, allow_dirty=True)
        except (IndexFormatError, UsageError):  # a broken scope is not published
            continue
        if scoped.scope_of != main_digest:
            continue
        out.update({f"scopes/{entry.name}/{rel}": blob for rel, blob in scoped.blobs.items()})
    return out


def load_index(index_dir: Path, fmt: str = "sha1", *, allow_dirty: bool = False) -> LocalIndex:
    """Read and verify `index_dir`: the manifest's shape, then the sha256 of every file.

    Each file is read once: the bytes whose sha256 matched are the bytes whose git id is
    recorded, so a file rewritten mid-publish cannot slip in unverified (see write_blobs).
    """
    path = index_dir / MANIFEST
    try:  # read once: the bytes decoded are the bytes published
        raw = read_input(path, MAX_MANIFEST_BYTES, follow_links=False)
    except FileNotFoundError:
        raise IndexFormatError(f"{path}: no index here (manifest.json is missing)") from None
    except InputRefused as exc:
        raise IndexFormatError(str(exc)) from None
    except OSError as exc:
        raise IndexFormatError(f"{path}: unreadable manifest: {exc}") from None
    manifest = decode_manifest(raw, path)
    if not isinstance(manifest, IndexManifest):
        raise IndexFormatError(f"{index_dir}: a slice of an index, not an index: combine "
                               "the slices with `kbase index --merge` first")
    source = manifest.source
    if source.dirty and not allow_dirty:
        paths = ", ".join(source.dirty_paths[:5])
        raise UsageError(f"{index_dir / MANIFEST}: index was built from a dirty work tree "
                         f"({paths}); commit and rebuild, or pass --allow-dirty")
    blobs = {MANIFEST: object_id(raw, "blob", fmt)}
    for rel, want in sorted(manifest.files.items()):
        rel = _safe_relpath(rel)
        if rel == MANIFEST:
            continue
        path = index_dir / rel
        # no link anywhere on the way: a linked `shards/` would publish files from outside
        if links_between(index_dir, path) is not None or not path.is_file():
            raise IndexFormatError(f"{path}: listed in the manifest but missing; rebuild with "
                                   "`kbase index`")
        try:
            data = read_input(path, size_cap(rel), follow_links=False)
        except InputRefused as exc:
            raise IndexFormatError(str(exc)) from None
        got = hashlib.sha256(data).hexdigest()
        if got != want:
            raise IndexFormatError(f"{path}: sha256 {got[:12]} does not match the manifest "
                                   f"({str(want)[:12]}); rebuild with `kbase index`")
        blobs[rel] = object_id(data, "blob", fmt)
    blobs.update(_scope_blobs(index_dir, hashlib.sha256(raw).hexdigest(), fmt))
    ignored = []
    for dirpath, _dirs, names in os.walk(index_dir):
        for name in names:
            rel = Path(dirpath, name).relative_to(index_dir).as_posix()
            if rel not in blobs:
                ignored.append(rel)
    return LocalIndex(
        format_version=manifest.format_version, source_commit=source.commit,
        dirty=source.dirty, built_at=manifest.built_at,
        kbase_version=manifest.kbase_version, blobs=blobs, ignored=tuple(sorted(ignored)),
        scope_of=manifest.scope.main_index.digest if manifest.scope is not None else None)
