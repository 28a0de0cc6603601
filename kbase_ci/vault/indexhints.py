"""Note summaries read from the published `kbase-index` branch, so a fresh clone's first
hook run need not parse every note to learn names, aliases, tags and who links where.

The branch is an attacker's input (anyone with push access writes it). So: only a few
files are read (the manifest, `notes.json`, `blobs.npy`, `notes.jsonl`, `links.jsonl`),
each bounded in size before it is read and checked against the manifest's sha256; every
row is checked for shape, type and count; on any doubt the answer is None and the hook
parses as it would without an index. The index stores each link's raw text, not a
target key the hook can trust to be computed as it computes it, so a summary carries
the raw texts folded (`notestore.fold`): `NoteStore.linking_to` matches a name inside
them, which may pick a note that does not link (it is then parsed and checked exactly)
but never misses one. A summary is used only for a note whose path and blob id equal
the ones the index was built from (`scanner.open_store`), so a stale index is safe note
by note.

Reading uses git plumbing only (kbase_ci.git), never kbase_ci.index: the hook path
imports no index, query or numeric code (pyproject's import-linter contracts).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from kbase_ci import __version__
from kbase_ci.errors import GitError
from kbase_ci.git import indexbranch
from kbase_ci.git.objects import read_blobs, tree_blobs
from kbase_ci.parse.linksyntax import decode_escapes, unescape
from kbase_ci.typedjson import Record, ShapeError, between, decode, matching
from kbase_ci.vault.notestore import NoteSummary, fold

FORMAT_VERSION = 6
"""The index format whose rows this module reads (tests/unit/vault/test_indexhints.py
checks it equals kbase_ci.index's)."""
NOTES_FILE, BLOBS_FILE, NOTE_ROWS_FILE, LINK_ROWS_FILE = (
    "notes.json", "blobs.npy", "notes.jsonl", "links.jsonl")
MAX_FILE_BYTES = 256 * 1024 * 1024
"""Largest file read (a 38k-note vault's links.jsonl is ~20 MB)."""
MAX_NOTES = 1_000_000
MAX_RAW = 8192
"""Longest link text kept; a longer one makes the whole index refused."""
_HEX = re.compile(r"[0-9a-f]+")
_NPY = re.compile(rb"\{'descr': '\|u1', 'fortran_order': False, 'shape': \((\d+),\), \}\s*")
_Sha256 = Annotated[str, matching(r"[0-9a-f]{64}", "a sha256")]


class _Head(Record):
    """The part of an index manifest this module reads (keys it does not name are
    ignored)."""

    format_version: int
    kbase_version: str
    config_digest: str
    files: dict[str, _Sha256]


class _Core(Record):
    paths: tuple[str, ...]
    blob_bytes: Annotated[int, between(20, 32)] = 0
    blobs: tuple[str, ...] = ()


class _Refused(Exception):
    """Anything that makes the index unusable here (the caller parses instead)."""


def _loose(raws: list[str]) -> str:
    """A note's link texts, one a line, in every form the parser's target may take: as
    written, CommonMark escapes removed, URI escapes decoded, both in either order."""
    forms: list[str] = []
    for raw in raws:
        if "%" in raw or "\\" in raw:
            plain = unescape(raw)
            forms.extend(dict.fromkeys((raw, plain, decode_escapes(plain),
                                        decode_escapes(raw), unescape(decode_escapes(raw)))))
        else:
            forms.append(raw)
    # Folding works character by character, and a line break is no combining mark:
    # folding the lines at once folds each.
    return fold("\n".join(forms))


def index_summaries(repo: Path, git_dir: Path, config_digest: str
                    ) -> dict[str, tuple[str, NoteSummary]] | None:
    """Path -> (blob id, summary) of every note of the first index found (the local
    index branch, a remote's, else an index commit in FETCH_HEAD: what `git fetch origin
    kbase-index` fills in a single-branch clone), or None when there is none, it was
    built by another kbase or under another configuration (`config_digest`: what a
    note's parse may depend on), or it is in any doubt. Which index is read matters for
    speed only: a summary is used only for a note at the blob id it was made from."""
    try:
        found = _first_index(repo, git_dir)
        return None if found is None else _read(repo, found, config_digest)
    except (_Refused, GitError, ValueError, TypeError, KeyError, IndexError,
            UnicodeDecodeError, RecursionError):
        return None


def _first_index(repo: Path, git_dir: Path) -> str | None:
    """A tree or commit id of an index, or None."""
    tips = indexbranch.index_ref_tips(repo)
    if tips:
        return tips[0][1]
    fetched = [c for c, _what in indexbranch.fetch_head(git_dir)]
    indexes = indexbranch.index_commits(repo, fetched)
    return indexes[0] if indexes else None


def _read(repo: Path, tree: str, config_digest: str) -> dict[str, tuple[str, NoteSummary]]:
    if not _HEX.fullmatch(tree):
        raise _Refused("tree id")
    names = ["manifest.json", NOTES_FILE, BLOBS_FILE, NOTE_ROWS_FILE, LINK_ROWS_FILE]
    found = tree_blobs(repo, tree, names)
    if any(size > MAX_FILE_BYTES for _sha, size in found.values()):
        raise _Refused("a file is too large")
    data = read_blobs(repo, [found[n][0] for n in names if n in found])
    text = {n: data[found[n][0]] for n in names if n in found}
    try:
        head = decode(_Head, json.loads(text["manifest.json"]))
    except ShapeError as exc:
        raise _Refused(str(exc)) from exc
    if head.format_version != FORMAT_VERSION or head.kbase_version != __version__ \
            or head.config_digest != config_digest:
        raise _Refused("another kbase or configuration built it")  # other links, maybe
    for name, body in text.items():
        if name != "manifest.json" and head.files.get(name) != hashlib.sha256(body).hexdigest():
            raise _Refused(f"{name} does not match the manifest")
    core = decode(_Core, json.loads(text[NOTES_FILE]))
    paths = core.paths
    if len(paths) > MAX_NOTES or len(set(paths)) != len(paths):
        raise _Refused("note paths")
    blobs = _blobs(core, text.get(BLOBS_FILE), len(paths))
    notes = _rows(text[NOTE_ROWS_FILE])
    if len(notes) != len(paths):
        raise _Refused("notes.jsonl rows")
    links: list[list[str]] = [[] for _ in paths]
    for row in _rows(text[LINK_ROWS_FILE]):
        if not isinstance(row, list) or len(row) < 4:
            raise _Refused("a link row")
        source, raw = row[0], row[3]
        if type(source) is not int or not 0 <= source < len(paths) \
                or not isinstance(raw, str) or len(raw) > MAX_RAW:
            raise _Refused("a link row")
        links[source].append(raw)
    return {path: (blob, _summary(row, raws))
            for path, blob, row, raws in zip(paths, blobs, notes, links, strict=True)}


def _rows(body: bytes) -> list[Any]:
    """The values of a JSON-lines file, decoded in one call (one per line costs ~3x);
    each is then checked by its reader."""
    lines = body.split(b"\n")
    if lines[-1:] == [b""]:
        lines.pop()
    got = json.loads(b"[" + b",".join(lines) + b"]") if lines else []
    if not isinstance(got, list) or len(got) != len(lines):
        raise _Refused("a JSON-lines file")
    return got


def _blobs(core: _Core, npy: bytes | None, n: int) -> tuple[str, ...]:
    if not core.blob_bytes:
        if len(core.blobs) != n or not all(_HEX.fullmatch(b) for b in core.blobs):
            raise _Refused("blob ids")
        return core.blobs
    # `numpy.save` of a uint8 vector, read without numpy (the hook never imports it).
    if npy is None or not npy.startswith(b"\x93NUMPY\x01\x00"):
        raise _Refused("blobs.npy")
    size = int.from_bytes(npy[8:10], "little")
    m = _NPY.fullmatch(npy[10:10 + size])
    body = npy[10 + size:]
    width = core.blob_bytes
    if m is None or int(m.group(1)) != len(body) or len(body) != n * width:
        raise _Refused("blobs.npy")
    return tuple(body[i * width:(i + 1) * width].hex() for i in range(n))


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Refused("a list of strings")
    return tuple(value)


def _summary(row: Any, raws: list[str]) -> NoteSummary:
    # A `notes.jsonl` line: size, headings, aliases, tags, block ids, frontmatter
    # (trailing empty ones left out).
    if not isinstance(row, list) or not 1 <= len(row) <= 6 or type(row[0]) is not int:
        raise _Refused("a note row")
    aliases = _strings(row[2]) if len(row) > 2 else ()
    tags = _strings(row[3]) if len(row) > 3 else ()
    front = row[5] if len(row) > 5 else {}
    if not isinstance(front, Mapping):
        raise _Refused("frontmatter")
    kind = front.get("type", "")
    return NoteSummary(aliases, tags, (), kind if isinstance(kind, str) else "",
                       loose=_loose(raws) if raws else "")
