"""`.kbase/manifest.json`: what an index is, what it was built from, and the sha256 of
every other file in it; declared here, and decoded and validated here only.

The manifest is `IndexManifest` (or, for a `--shard K/N` slice, `SliceManifest`), both a
`Header` of blocks (kbase_ci.index.blocks) plus what differs. An index can come from a
branch anyone can push to, so `read_manifest` checks the format and version, then every
key's type and range (`typedjson.decode`), and refuses anything else with an
IndexFormatError naming the file and the key (``manifest.json: `embeddings.dim` should
be ...``): nothing outside this module reads the manifest's JSON by key.

Everything written into an index goes through `dump_json`/`dump_table` so that the same
data always gives the same bytes: sorted keys, fixed separators, UTF-8, one trailing
newline. The manifest is indented (people and `git diff` read it); tables are compact.
"""

# No `from __future__ import annotations`: the records' annotations are evaluated once,
# here, instead of compiled and evaluated again by the first decode of every process
# (`typedjson.decoding._hints`: 20-35 ms of the first manifest read, loaded machine).

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any, Literal

from kbase_ci.errors import IndexFormatError, InputRefused
from kbase_ci.git import indexbranch
from kbase_ci.index.blocks import (
    Background,
    Bm25Settings,
    Counts,
    Embeddings,
    Fusion,
    IndexPath,
    Mentions,
    Scope,
    Sha256,
    Shard,
    Slice,
    SliceCounts,
    Source,
    Tokenizer,
    VectorSettings,
)
from kbase_ci.state.bounded import decode_json, read_input
from kbase_ci.typedjson import Check, Record, ShapeError, decode, encode, json_field
from kbase_ci.vault.indextables import FORMAT_VERSION

FORMAT = "kbase-index"
MANIFEST_NAME = "manifest.json"
MAX_MANIFEST_BYTES = 64 << 20


class Header(Record, kw_only=True):
    """What an index shares with its slices (they must agree to be merged): all but the
    counts, warnings, shards and files."""

    format: Literal["kbase-index"]
    format_version: int
    kbase_version: str
    source: Source
    built_at: str
    """ISO-8601 committer date of `source.commit` (never the clock)."""
    config_digest: Sha256
    domain: str
    """The `index.domain` rule: `folder` or `frontmatter:KEY`."""
    tokenizer: Tokenizer
    bm25: Bm25Settings
    vectors: VectorSettings | None
    embeddings: Embeddings
    fusion: Fusion | None
    scope: Scope | None = json_field(default=None, omit=True)
    """Only in a scoped index (kbase_ci/scope)."""


Files = Annotated[dict[IndexPath, Sha256], Check(lambda f: MANIFEST_NAME not in f,
                                                 "without the manifest itself")]


class IndexManifest(Header):
    counts: Counts
    warnings: tuple[str, ...]
    link_inputs: Sha256
    """What decides where links point (`assemble.link_inputs`)."""
    shards: dict[str, Shard]
    background: Background | None
    files: Files
    """relative path -> sha256 of every file but the manifest (`assemble.write_manifest`)."""
    mentions: Mentions | None = json_field(default=None, omit=True)
    """`mentions.jsonl`, when the index has one (older builds: None)."""


class SliceManifest(Header):
    """A `--shard K/N` slice: not an index; `kbase index --merge` makes one."""

    counts: SliceCounts
    warnings: tuple[str, ...]
    shards: dict[str, Shard]
    slice: Slice
    files: Files


Manifest = IndexManifest | SliceManifest


def header_fields(head: Header) -> dict[str, Any]:
    """A header's fields as keyword arguments, to build a manifest on it (or to compare
    the header parts of two)."""
    return {name: getattr(head, name) for name in Header._fields}


def dump_json(obj: Any) -> bytes:
    """The manifest's byte form: sorted keys, 2-space indent, trailing newline."""
    return (json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2) + "\n").encode()


def dump_table(obj: Any) -> bytes:
    """Data files: the same canonical form without whitespace."""
    return (json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            + "\n").encode()


def manifest_bytes(manifest: Manifest) -> bytes:
    return dump_json(encode(manifest))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_manifest(directory: Path, *, shown: Path | None = None) -> Manifest:
    """The manifest of the index (or slice) in `directory`, decoded and validated.

    Raises IndexFormatError for a missing, unreadable, oversized or too deeply nested
    manifest, another format, a version this kbase cannot read, or any key of the wrong
    type or range. File hashes are checked by `reader.open_index`. `shown`: the folder
    to name in errors (a reader reads a pinned generation through another path)."""
    path = Path(shown if shown is not None else directory) / MANIFEST_NAME
    try:  # a regular file, not through a link, at most MAX_MANIFEST_BYTES
        raw = read_input(Path(directory) / MANIFEST_NAME, MAX_MANIFEST_BYTES,
                         follow_links=False)
    except FileNotFoundError:
        raise IndexFormatError(f"{path}: no index here (manifest.json is missing)") from None
    except InputRefused as exc:
        raise IndexFormatError(f"{path}: {exc.detail}") from None
    except OSError as exc:
        raise IndexFormatError(f"{path}: unreadable manifest: {exc}") from None
    return decode_manifest(raw, path)


def decode_manifest(raw: bytes, path: Path | str) -> Manifest:
    """`raw` (a manifest's bytes) as an IndexManifest or SliceManifest; IndexFormatError
    naming `path` and the first bad key otherwise."""
    if len(raw) > MAX_MANIFEST_BYTES:
        raise IndexFormatError(f"{path}: larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        data = decode_json(raw, str(path))
    except InputRefused as exc:  # not JSON, nested too deeply, too large to decode
        raise IndexFormatError(f"{exc.at}: unreadable manifest: {exc.detail}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise IndexFormatError(f"{path}: not a kbase index (format is not `{FORMAT}`)")
    version = data.get("format_version")
    if type(version) is not int:
        raise IndexFormatError(f"{path}: format_version is missing or not an integer")
    if version > FORMAT_VERSION:
        raise IndexFormatError(
            f"{path}: index format {version} is from a newer kbase (this one reads "
            f"{FORMAT_VERSION}): upgrade kbase-ci")
    if version < FORMAT_VERSION:
        raise IndexFormatError(
            f"{path}: index is from an older kbase (format {version}; this one reads "
            f"{FORMAT_VERSION}): rebuild with `kbase index`")
    kind: type[Manifest] = SliceManifest if "slice" in data else IndexManifest
    try:
        return decode(kind, data)
    except ShapeError as exc:
        raise IndexFormatError(f"{path}: {exc}") from None


class _Any(Record):
    """What every kbase manifest of any format version says: which format it is."""

    format: Literal["kbase-index"]
    format_version: int


class _Commit(Record):
    commit: str | None = None


class _Sourced(Record):
    source: _Commit


class _Listed(Record):
    files: dict[str, Any]


class BranchIndex(Record):
    """A kbase index found in a commit's tree, of any format version (`manifest_at`)."""

    format_version: int
    source_commit: str | None
    """As its manifest says (unchecked: see `publish.source_of`); None when it does not."""


def _lenient(raw: bytes | None, kind: type[Any]) -> Any:
    """`raw` decoded as `kind`, or None when it is not JSON of that shape."""
    if raw is None:
        return None
    try:
        return decode(kind, decode_json(raw, MANIFEST_NAME))
    except (ValueError, InputRefused):  # ShapeError is a ValueError
        return None


MAX_MANIFEST_BYTES = 64 << 20
"""Largest manifest read from a branch (a 100k-note index's is a few MB)."""


def manifest_at(repo: Path, commit: str) -> BranchIndex | None:
    """The kbase index in `commit`'s tree, or None when the tree is not a kbase index.
    Any format version counts: `kbase publish` replaces an older one. A `manifest.json`
    past `MAX_MANIFEST_BYTES` is not read: it counts as an index of format 0."""
    size = indexbranch.blob_size_at(repo, commit, MANIFEST_NAME)
    if size is None:
        return None
    if size > MAX_MANIFEST_BYTES:
        # The branch is anyone's with push access: a manifest too large to be kbase's is
        # an invalid index of no known format, which `publish` replaces, unread.
        return BranchIndex(0, None)
    raw = indexbranch.read_file_at(repo, commit, MANIFEST_NAME)
    found: _Any | None = _lenient(raw, _Any)
    if found is None:
        return None
    sourced: _Sourced | None = _lenient(raw, _Sourced)
    return BranchIndex(found.format_version,
                       sourced.source.commit if sourced is not None else None)


def listed_files(raw: bytes) -> frozenset[str] | None:
    """The files a kbase manifest of any version lists, or None when `raw` is not one
    (what `swap` may replace)."""
    found: _Any | None = _lenient(raw, _Any)
    listed: _Listed | None = _lenient(raw, _Listed) if found is not None else None
    return frozenset(listed.files) if listed is not None else None
