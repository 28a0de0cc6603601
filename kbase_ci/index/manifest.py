"""`.kbase/manifest.json`: what an index is, what it was built from, and the sha256 of
every other file in it.

Everything written into an index goes through `dump_json`/`dump_table` so that the same
data always gives the same bytes: sorted keys, fixed separators, UTF-8, one trailing
newline. The manifest is indented (people and `git diff` read it); tables are compact.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from kbase_ci.errors import IndexFormatError
from kbase_ci.git import indexbranch

FORMAT = "kbase-index"
FORMAT_VERSION = 6
MANIFEST_NAME = "manifest.json"
# The keys `kbase publish` and every reader rely on; a manifest without them is refused.
REQUIRED_KEYS = ("format", "format_version", "kbase_version", "source", "built_at",
                 "config_digest", "tokenizer", "embeddings", "counts", "files")


def dump_json(obj: Any) -> bytes:
    """The manifest's byte form: sorted keys, 2-space indent, trailing newline."""
    return (json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode()


def dump_table(obj: Any) -> bytes:
    """Data files: the same canonical form without whitespace."""
    return (json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            + "\n").encode()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


MAX_MANIFEST_BYTES = 64 << 20


def read_manifest(directory: Path, *, shown: Path | None = None) -> dict[str, Any]:
    """The manifest of the index in `directory`, after checking its format and version.

    Raises IndexFormatError for a missing, unreadable, oversized or too deeply nested
    manifest, another format, or a version this kbase cannot read. File hashes are
    checked by `reader.open_index`. `shown`: the folder to name in errors (a reader
    reads a pinned generation through another path)."""
    path = Path(shown if shown is not None else directory) / MANIFEST_NAME
    try:
        with (Path(directory) / MANIFEST_NAME).open("rb") as fh:
            raw = fh.read(MAX_MANIFEST_BYTES + 1)
        if len(raw) > MAX_MANIFEST_BYTES:
            raise IndexFormatError(f"{path}: larger than {MAX_MANIFEST_BYTES} bytes")
        data = json.loads(raw)
    except FileNotFoundError:
        raise IndexFormatError(f"{path}: no index here (manifest.json is missing)") from None
    except RecursionError:
        raise IndexFormatError(f"{path}: unreadable manifest: nested too deeply") from None
    except (OSError, ValueError) as exc:
        raise IndexFormatError(f"{path}: unreadable manifest: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise IndexFormatError(f"{path}: not a kbase index (format is not `{FORMAT}`)")
    version = data.get("format_version")
    if not isinstance(version, int):
        raise IndexFormatError(f"{path}: format_version is missing or not an integer")
    if version > FORMAT_VERSION:
        raise IndexFormatError(
            f"{path}: index format {version} is from a newer kbase (this one reads "
            f"{FORMAT_VERSION}): upgrade kbase-ci")
    if version < FORMAT_VERSION:
        raise IndexFormatError(
            f"{path}: index is from an older kbase (format {version}; this one reads "
            f"{FORMAT_VERSION}): rebuild with `kbase index`")
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise IndexFormatError(f"{path}: manifest lacks {', '.join(missing)}")
    if not isinstance(data["files"], dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in data["files"].items()):
        raise IndexFormatError(f"{path}: manifest `files` is not a mapping of paths to hashes")
    for key, kind in (("counts", dict), ("embeddings", dict), ("source", dict),
                      ("shards", dict)):
        if key in data and not isinstance(data[key], kind):
            raise IndexFormatError(f"{path}: manifest `{key}` is not an object")
    return data


def manifest_at(repo: Path, commit: str) -> dict[str, Any] | None:
    """The kbase manifest in `commit`'s tree, or None when the tree is not a kbase index."""
    raw = indexbranch.read_file_at(repo, commit, MANIFEST_NAME)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    if (not isinstance(data, dict) or data.get("format") != FORMAT
            or not isinstance(data.get("format_version"), int)):
        return None
    return data
