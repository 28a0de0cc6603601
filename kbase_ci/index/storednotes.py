"""The notes table as stored (format 4): what a `notes.jsonl` line holds, and what is
kept once for every note instead (docs/index-format.md).

A full row (`layout.NoteRow`) repeats much that is known elsewhere: the title is the
file name, the token estimate follows from the size, a note's chunks are counted in its
shard's `chunks.json`. On a vault of short notes (tldr-pages: 38k pages of 477 bytes)
the repeated parts were most of the table, and the table a third of the index. So a line
holds only `layout.StoredNote`, trailing empty values left out; `notes.json` holds per
note its path and `group` (the number of its [shard, domain] pair in `groups`);
`blobs.npy` the blob ids as bytes; `similar.npy` and `similar.scores.npy` the similar
lists, `similar_k` entries per note. Readers put full rows back together
(`full_note_row`), so nothing above the index layer sees the difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kbase_ci.errors import IndexFormatError
from kbase_ci.index.layout import NoteRow
from kbase_ci.parse.outline import note_title
from kbase_ci.vault.indextables import NotesCore


def stored_note_row(row: NoteRow) -> list[Any]:
    """A full row's `notes.jsonl` line (`StoredNote`, trailing empties left out)."""
    if row.title != note_title(row.path) or row.tokens != token_estimate(row.size):
        raise ValueError(f"{row.path}: title or token estimate is not derived")
    out: list[Any] = [row.size, row.headings, row.aliases, row.tags, row.block_ids,
                      row.frontmatter]
    while len(out) > 1 and not out[-1]:
        out.pop()
    return out




def full_note_row(stored: Sequence[Any], core: NotesCore, i: int, blob: str,
                  chunks: Sequence[int], similar: list[list[float]]) -> NoteRow:
    """Note `i`'s line as a full row: `core` is `notes.json`, `blob` the note's
    (`blob_list`), `chunks` its [first, count] chunks of its shard (`chunk_spans`),
    `similar` its similar list (`similar_list`)."""
    # `stored_fields` inlined: this runs once per note of a whole-table query.
    empty: list[Any] = [[], [], [], [], {}]  # new each time: callers may modify a row
    size, headings, aliases, tags, block_ids, frontmatter = [*stored, *empty[len(stored) - 1:]]
    path = core.paths[i]
    shard, domain = core.groups[core.group[i]]
    return NoteRow(path, note_title(path), aliases, tags, headings, block_ids, frontmatter,
                   blob, size, token_estimate(size), domain, shard, list(chunks), similar)


def core_table(rows: Sequence[NoteRow], statuses: Sequence[str],
               similar_k: int) -> NotesCore:
    """`notes.json` for full rows. Blob ids are in `blobs.npy` when they are all hex of
    one width (`blob_bytes` per note); otherwise, as a list, in `blobs`."""
    pairs = [(r.shard, r.domain) for r in rows]
    groups = sorted(set(pairs))
    number = {g: i for i, g in enumerate(groups)}
    blobs = [r.blob for r in rows]
    width = _blob_width(blobs)
    return NotesCore([r.path for r in rows], [number[g] for g in pairs], groups, similar_k,
                     list(statuses), blobs if width is None else None, width)


def _blob_width(blobs: Sequence[str]) -> int | None:
    """Bytes per blob id when every one is lowercase hex of the same even length (SHA-1
    or SHA-256 repositories); None otherwise."""
    if not blobs or len({len(b) for b in blobs}) != 1 or len(blobs[0]) % 2 or not blobs[0]:
        return None
    try:
        raw = bytes.fromhex("".join(blobs))
    except ValueError:
        return None
    return len(blobs[0]) // 2 if raw.hex() == "".join(blobs) else None


def blob_bytes(core: NotesCore, rows: Sequence[NoteRow]) -> bytes | None:
    """`blobs.npy`'s values for `core_table(rows)`, or None when `core` lists them."""
    if core.blob_bytes is None:
        return None
    return bytes.fromhex("".join(r.blob for r in rows))


def blob_list(core: NotesCore, values: bytes | memoryview | None) -> list[str]:
    """Blob id (hex) per note: `core`'s `blobs`, or `blobs.npy`'s `values` split."""

    width = core.blob_bytes
    if width is None:
        return core.blobs or []
    n = len(core.paths)
    if not isinstance(width, int) or values is None or len(values) != n * width:
        raise IndexFormatError("blobs.npy does not hold one id per note")
    hexed = bytes(values).hex()
    step = 2 * width
    return [hexed[j:j + step] for j in range(0, n * step, step)]


def similar_arrays(rows: Sequence[NoteRow], k: int) -> tuple[list[int], list[int]]:
    """`similar.npy` (note numbers) and `similar.scores.npy` (score x 1000, 0 where a
    list is shorter than `k`) for full rows: `k` entries per note."""
    ids: list[int] = []
    scores: list[int] = []
    for r in rows:
        got = r.similar[:k]
        ids += [n for n, _ in got] + [0] * (k - len(got))
        scores += [round(s * 1000) for _, s in got] + [0] * (k - len(got))
    return ids, scores


def similar_list(ids: Sequence[int], scores: Sequence[int], k: int,
                 i: int) -> list[list[float]]:
    """Note `i`'s similar list from the two arrays (`similar_arrays`)."""
    return [[int(ids[j]), scores[j] / 1000] for j in range(i * k, i * k + k) if scores[j]]


def shard_notes(core: NotesCore) -> dict[str, list[int]]:
    """shard id -> the numbers of its notes (ascending: path order), from `notes.json`."""
    out: dict[str, list[int]] = {}
    groups = core.groups
    for i, g in enumerate(core.group):
        out.setdefault(groups[g][0], []).append(i)
    return out


def chunk_spans(members: Sequence[int], counts: Sequence[int]) -> dict[int, list[int]]:
    """note number -> [first chunk, chunk count] for one shard: its notes (`members`)
    and their counts from its `chunks.json`."""

    if len(members) != len(counts):
        raise IndexFormatError("chunks.json does not match the shard's notes")
    out: dict[int, list[int]] = {}
    first = 0
    for i, n in zip(members, counts, strict=True):
        out[i] = [first if n else 0, n]
        first += n
    return out


def heading_path(headings: Sequence[Sequence[Any]], line: int) -> list[str]:
    """The heading texts above `line` (outermost first) from a note's stored
    `headings` ([level, text, line] in document order), as the parser nests them: the
    chunk rows do not repeat it."""
    stack: list[tuple[int, str]] = []
    for level, text, at in headings:
        if at > line:
            break
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
    return [t for _, t in stack]


def token_estimate(size: int) -> int:
    """Rough LLM tokens for a note of `size` bytes (~4 bytes per token of English)."""
    return (size + 3) // 4


def chunk_notes(table: dict[str, Any], notes: Sequence[str]) -> list[str]:
    """Note path per chunk of a `chunks.json` table whose shard holds `notes` (sorted)."""

    counts = table.get("counts")
    if not isinstance(counts, list) or len(counts) != len(notes):
        raise IndexFormatError("chunks.json does not match the shard's notes")
    return [p for p, n in zip(notes, counts, strict=True) for _ in range(n)]
