"""Chunks: the units BM25 and vectors index. Chunks start at headings: a section longer
than `MAX_CHARS` is cut at paragraph boundaries (never inside a code fence), and
consecutive short sections of a note are packed into one chunk of up to `PACK_CHARS`,
named by its first section's heading path.

Packing matters for size: a vector costs ~640 bytes (256 dims as f16 plus its graph
links) and a note of the generated vault averages seven sections of ~700 characters;
one vector per section made the index larger than the vault.

The limit keeps a chunk within what a static embedding model reads (model2vec truncates
at 512 tokens, about 2,000 characters of English) and what an agent wants back as one
search hit. A note the parser could not read structurally (too large, or a parser crash)
is chunked as plain paragraphs (it has no headings).
"""

from __future__ import annotations

from dataclasses import dataclass

from kbase_ci.model import ParsedNote
from kbase_ci.parse.outline import note_text, sections, split_lines

VERSION = 1
MAX_CHARS = 2000
PACK_CHARS = 1500
_FENCES = ("```", "~~~")


@dataclass(frozen=True, slots=True)
class Chunk:
    note: str
    """Vault-relative path of the note."""
    heading_path: tuple[str, ...]
    """Heading texts from the outermost to the section's own; () before the first heading."""
    start_line: int
    end_line: int
    """Inclusive 1-based line range in the note (heading line included)."""
    text: str
    """Section body text (not stored in the index: the vault has it)."""
    packable: bool = False
    """Made of whole sections, so a following small section may join it."""

    def row(self) -> list[object]:
        return [self.note, list(self.heading_path), self.start_line, self.end_line]


def chunk_note(note: ParsedNote, data: bytes) -> list[Chunk]:
    """Chunks of one note in document order. A note the parser did not read has no
    headings, so it comes out as paragraphs of its whole text."""
    text = note_text(data)
    out: list[Chunk] = []
    all_lines = split_lines(text)
    for sec in sections(note, text):
        body_lines = all_lines[sec.start_line - 1:sec.end_line]
        if not any(ln.strip() for ln in body_lines):
            continue
        pieces = _split(note.path, sec.path, sec.start_line, sec.end_line, body_lines)
        if (len(pieces) == 1 and out and out[-1].packable
                and len(out[-1].text) + len(pieces[0].text) + 1 <= PACK_CHARS):
            prev, cur = out[-1], pieces[0]
            gap = all_lines[prev.end_line:cur.start_line - 1]
            out[-1] = Chunk(prev.note, prev.heading_path, prev.start_line, cur.end_line,
                            "\n".join([prev.text, *gap, cur.text]), True)
            continue
        out.extend(pieces if len(pieces) > 1 else [_packable(pieces[0])])
    return out


def _packable(c: Chunk) -> Chunk:
    return Chunk(c.note, c.heading_path, c.start_line, c.end_line, c.text, True)


def _split(path: str, heading_path: tuple[str, ...], start: int, end: int,
           lines: list[str]) -> list[Chunk]:
    """`lines` are lines start..end; cut them into pieces of at most MAX_CHARS where a
    blank line outside a fence allows it (a single longer paragraph stays whole)."""
    total = sum(len(ln) + 1 for ln in lines)
    if total <= MAX_CHARS:
        return [_chunk(path, heading_path, start, lines)]
    out: list[Chunk] = []
    piece_start = 0
    size = 0
    last_break = -1  # index of the last blank line (outside fences) in the current piece
    in_fence = ""
    for i, line in enumerate(lines):
        stripped = line.lstrip(" >")
        if in_fence:
            if stripped.startswith(in_fence):
                in_fence = ""
        elif stripped.startswith(_FENCES):
            in_fence = stripped[:3]
        elif not line.strip() and i > piece_start:
            last_break = i
        size += len(line) + 1
        if size > MAX_CHARS and last_break > piece_start:
            out.append(_chunk(path, heading_path, start + piece_start,
                              lines[piece_start:last_break]))
            piece_start = last_break + 1
            size = sum(len(ln) + 1 for ln in lines[piece_start:i + 1])
            last_break = -1
    if piece_start < len(lines):
        out.append(_chunk(path, heading_path, start + piece_start, lines[piece_start:]))
    return [c for c in out if c.text.strip()]


def _chunk(path: str, heading_path: tuple[str, ...], start: int, lines: list[str]) -> Chunk:
    # Blank lines at either end are not part of the chunk's range.
    first, n = 0, len(lines)
    while n > 1 and not lines[n - 1].strip():
        n -= 1
    while first < n - 1 and not lines[first].strip():
        first += 1
    return Chunk(path, heading_path, start + first, start + n - 1, "\n".join(lines[first:n]))
