"""Note summaries and link positions read from the published `kbase-index` branch, so a
fresh clone's hook need not parse every note to learn names, aliases, tags and who
links where.

The branch is an attacker's input (anyone with push access writes it), and a hook runs
on laptops, so what is read is bounded by the vault the hook sees, not by the branch:
each file's size (from its object header, before it is read) and the containers a JSON
file may decode to are capped in proportion to the notes listed and their bytes; each
file must match the manifest's sha256, every row its shape; running out of memory
anyway means "parse instead". Nothing read is believed without the note's own bytes
(issue 38): a summary is used only for a note at the path and blob id it names, and only
if every alias, tag and type it claims is written in that note; which notes may link to
a moved note is found in the notes' text, never in the index, so a forged index cannot
hide a link; and a note's links are taken from `hooklinks.jsonl` only when each one is
written at the place it claims and the moved note's name appears nowhere else in the
note (`HintedNotes.links`). Otherwise the note is parsed, as without an index.

Reading uses git plumbing only (kbase_ci.git), never kbase_ci.index: the hook path
imports no index, query or numeric code (pyproject's import-linter contracts).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Annotated, Any, NamedTuple

from kbase_ci import __version__
from kbase_ci.errors import GitError
from kbase_ci.git import indexbranch
from kbase_ci.git.objects import read_blobs, tree_blobs
from kbase_ci.parse.suppressions import MARKER as SUPPRESSION_MARKER
from kbase_ci.parsed import Link
from kbase_ci.typedjson import Record, ShapeError, decode, matching
from kbase_ci.vault.hintcheck import loose_text, names_in, verified_links, yaml_rewrites
from kbase_ci.vault.indextables import (
    FORMAT_VERSION,
    NotesCore,
    StoredNote,
    read_core,
    stored_fields,
)
from kbase_ci.vault.notestore import NoteSummary

MANIFEST_FILE, NOTES_FILE, BLOBS_FILE, NOTE_ROWS_FILE, HOOK_LINKS_FILE = (
    "manifest.json", "notes.json", "blobs.npy", "notes.jsonl", "hooklinks.jsonl")
MAX_FILE_BYTES = 256 * 1024 * 1024
"""Largest file read whatever the vault (a 38k-note vault's notes.jsonl is ~15 MB)."""
MAX_NOTES = 1_000_000
_SLACK = 64 * 1024
"""Bytes and containers any index may hold beyond its notes' share (headers, keys)."""
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


class _Refused(Exception):
    """Anything that makes the index unusable here (the caller parses instead)."""


class Budget(NamedTuple):
    """What a genuine index of the notes the hook sees can hold, file by file: a JSON
    row of a note holds its headings, aliases, tags, block ids, frontmatter and links,
    all written in the note, so its size and its number of containers follow from the
    note's bytes; `notes.json` holds a path and a few numbers per note. Rules, not
    fitted numbers: a heading, a block id, a YAML list or map and a link each take at
    least 2 bytes of a note, a byte becomes at most 6 of JSON (`\\u0001`), and the
    listing's paths are what `notes.json` spells."""

    notes: int
    note_bytes: int
    path_bytes: int

    def file_bytes(self, name: str) -> int:
        if name == MANIFEST_FILE:  # a few hashes and counts per shard: at most one a note
            cap = 2048 * self.notes
        elif name == NOTES_FILE:
            cap = 2 * self.path_bytes + 64 * self.notes
        elif name == BLOBS_FILE:
            cap = 32 * self.notes
        else:  # a row per note: its bytes, escaped, and its numbers
            cap = 16 * self.note_bytes + 64 * self.notes
        return min(MAX_FILE_BYTES, cap + _SLACK)

    def containers(self, name: str) -> int:
        """Most `[` and `{` a file's rows may open (each a Python object decoded)."""
        per_note = 4 if name in (NOTES_FILE, MANIFEST_FILE) else 8
        return per_note * self.notes + self.note_bytes // 2 + _SLACK


class HintedNotes:
    """Notes summarized from the index (path -> summary), their texts and their rows of
    `hooklinks.jsonl`, each checked against the text before it is used."""

    def __init__(self, summaries: Mapping[str, NoteSummary], texts: Mapping[str, bytes],
                 links: Mapping[str, bytes]) -> None:
        self.summaries = dict(summaries)
        self._texts = texts
        self._links = links
        self._loose: dict[str, str | None] = {}

    def _text(self, path: str) -> str | None:
        try:
            return self._texts[path].decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _loose_of(self, path: str) -> str | None:
        """`loose_text` of a note, or None when its text cannot be searched (not UTF-8,
        or YAML that may spell a link otherwise: `yaml_rewrites`)."""
        if path not in self._loose:
            text = self._text(path)
            self._loose[path] = None if text is None or yaml_rewrites(text) else \
                loose_text(text)
        return self._loose[path]

    def linking_to(self, keys: Collection[str]) -> set[str]:
        """Notes whose text may hold a link to one of `keys` (folded target keys): any
        note that does is among them (`loose_text`), whatever the index says."""
        out = set()
        named = names_in(keys)
        for path in self.summaries:
            loose = self._loose_of(path)
            if loose is None or named(loose):
                out.add(path)
        return out

    def links(self, path: str, keys: Collection[str]) -> tuple[Link, ...] | None:
        """The links of note `path` from its `hooklinks.jsonl` row, or None (parse it)
        unless every link is written where the row says and no key of `keys` (folded)
        appears in the note outside them (so no link to it was left out)."""
        text, row = self._text(path), self._links.get(path)
        # A suppression comment could silence what is found: such a note is parsed.
        if text is None or row is None or SUPPRESSION_MARKER in text:
            return None
        # No more than a row of this note can hold (`Budget`'s rules, for one note).
        size = len(self._texts[path])
        if len(row) > 16 * size + 64 or row.count(b"[") + row.count(b"{") > 2 + size // 2:
            return None
        try:
            return verified_links(text, json.loads(row), keys)
        except (ValueError, RecursionError, MemoryError):
            return None


def index_hints(repo: Path, git_dir: Path, config_digest: str,
                notes: Mapping[str, tuple[str, bytes]]) -> HintedNotes | None:
    """The notes of `notes` (path -> (blob id, bytes): the notes the hook has not parsed)
    that the first index found (the local index branch, a remote's, else an index commit
    in FETCH_HEAD: what `git fetch origin kbase-index` fills in a single-branch clone)
    holds at the same blob id with a summary their text bears out; None when there is
    no index, it was built by another kbase or under another configuration
    (`config_digest`: what a note's parse may depend on), or it is in any doubt."""
    try:
        found = _first_index(repo, git_dir)
        if found is None:
            return None
        budget = Budget(len(notes), sum(len(b) for _s, b in notes.values()),
                        sum(len(p.encode("utf-8", "surrogateescape")) for p in notes))
        return _read(repo, found, config_digest, notes, budget)
    except (_Refused, GitError, ValueError, TypeError, KeyError, IndexError,
            UnicodeDecodeError, RecursionError, MemoryError):
        return None


def _first_index(repo: Path, git_dir: Path) -> str | None:
    """A tree or commit id of an index, or None."""
    tips = indexbranch.index_ref_tips(repo)
    if tips:
        return tips[0][1]
    fetched = [c for c, _what in indexbranch.fetch_head(git_dir)]
    indexes = indexbranch.index_commits(repo, fetched)
    return indexes[0] if indexes else None


def _read(repo: Path, tree: str, config_digest: str, notes: Mapping[str, tuple[str, bytes]],
          budget: Budget) -> HintedNotes:
    if not _HEX.fullmatch(tree):
        raise _Refused("tree id")
    names = [MANIFEST_FILE, NOTES_FILE, BLOBS_FILE, NOTE_ROWS_FILE, HOOK_LINKS_FILE]
    found = tree_blobs(repo, tree, names)
    if any(size > budget.file_bytes(n) for n, (_sha, size) in found.items()):
        raise _Refused("a file is larger than an index of these notes can be")
    data = read_blobs(repo, [found[n][0] for n in names if n in found])
    text = {n: data[found[n][0]] for n in names if n in found}
    try:
        head = decode(_Head, _loads(text[MANIFEST_FILE], budget.containers(MANIFEST_FILE)))
    except ShapeError as exc:
        raise _Refused(str(exc)) from exc
    if head.format_version != FORMAT_VERSION or head.kbase_version != __version__ \
            or head.config_digest != config_digest:
        raise _Refused("another kbase or configuration built it")  # other links, maybe
    for name, body in text.items():
        if name != MANIFEST_FILE and head.files.get(name) != hashlib.sha256(body).hexdigest():
            raise _Refused(f"{name} does not match the manifest")
    core = read_core(_loads(text[NOTES_FILE], budget.containers(NOTES_FILE)))
    paths = core.paths
    if len(paths) > MAX_NOTES or len(set(paths)) != len(paths):
        raise _Refused("note paths")
    blobs = _blobs(core, text.get(BLOBS_FILE), len(paths))
    rows = _lines(text[NOTE_ROWS_FILE], len(paths))
    link_rows = _lines(text[HOOK_LINKS_FILE], len(paths))
    # Only the rows of notes the hook sees at the indexed blob are decoded.
    wanted = [(i, p) for i, p in enumerate(paths) if notes.get(p, ("",))[0] == blobs[i]]
    body = b"[" + b",".join(rows[i] for i, _p in wanted) + b"]"
    decoded = _loads(body, budget.containers(NOTE_ROWS_FILE))
    if not isinstance(decoded, list) or len(decoded) != len(wanted):
        raise _Refused("notes.jsonl rows")
    summaries: dict[str, NoteSummary] = {}
    links: dict[str, bytes] = {}
    empty = NoteSummary()
    for (i, path), row in zip(wanted, decoded, strict=True):
        # Most rows are `[size]` or `[size, headings]`: nothing to check in the note.
        summary = empty if isinstance(row, list) and 1 <= len(row) <= 2 and \
            type(row[0]) is int else _summary(row)
        if summary is empty or _written(summary, notes[path][1]):
            summaries[path] = summary
            links[path] = link_rows[i]
    return HintedNotes(summaries, {p: notes[p][1] for p in summaries}, links)


def _written(summary: NoteSummary, note: bytes) -> bool:
    """Whether every alias, tag and type the index claims is written in the note (else
    the note is parsed: a forged alias must not make a broken link resolve)."""
    words = [*summary.aliases, *summary.tags, *([summary.type] if summary.type else [])]
    return all(w.encode("utf-8", "surrogateescape") in note for w in words)


def _loads(body: bytes, containers: int) -> Any:
    """JSON of at most `containers` arrays and objects (counted before decoding: 80M
    empty lists are refused, not built)."""
    if body.count(b"[") + body.count(b"{") > containers:
        raise _Refused("more rows than these notes can have")
    return json.loads(body)


def _lines(body: bytes, n: int) -> list[bytes]:
    """The `n` lines of a JSON-lines file, undecoded."""
    lines = body.split(b"\n")
    if lines[-1:] == [b""]:
        lines.pop()
    if len(lines) != n:
        raise _Refused("a JSON-lines file has another row count than notes")
    return lines


def _blobs(core: NotesCore, npy: bytes | None, n: int) -> list[str]:
    if core.blob_bytes is None:
        if core.blobs is None or len(core.blobs) != n \
                or not all(_HEX.fullmatch(b) for b in core.blobs):
            raise _Refused("blob ids")
        return core.blobs
    # `numpy.save` of a uint8 vector, read without numpy (the hook never imports it).
    if npy is None or not npy.startswith(b"\x93NUMPY\x01\x00"):
        raise _Refused("blobs.npy")
    size = int.from_bytes(npy[8:10], "little")
    m = _NPY.fullmatch(npy[10:10 + size])
    body = npy[10 + size:]
    width = core.blob_bytes
    if not 20 <= width <= 32 or m is None or int(m.group(1)) != len(body) \
            or len(body) != n * width:  # git's object ids are SHA-1 or SHA-256
        raise _Refused("blobs.npy")
    return [body[i * width:(i + 1) * width].hex() for i in range(n)]


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _Refused("a list of strings")
    return tuple(value)


def _summary(row: Any) -> NoteSummary:
    """A `notes.jsonl` line's summary (`StoredNote`, trailing empty fields left out)."""
    if not isinstance(row, list) or not 1 <= len(row) <= len(StoredNote._fields) \
            or type(row[0]) is not int:
        raise _Refused("a note row")
    stored = stored_fields(row)
    front = stored.frontmatter
    if not isinstance(front, Mapping):
        raise _Refused("frontmatter")
    kind = front.get("type", "")
    return NoteSummary(_strings(stored.aliases), _strings(stored.tags), (),
                       kind if isinstance(kind, str) else "")

