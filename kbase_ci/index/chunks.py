"""Chunks: the units BM25 and vectors index, at paragraph grain.

A chunk is one paragraph of a section: a run of non-blank lines, a fenced code block kept
whole (blank lines inside it included), and code that follows a paragraph joined to it
(a command under its description, as in tldr pages and most how-to notes). A paragraph
longer than `MAX_CHARS` is cut between lines. A heading is a chunk of its own (its text;
its line): a section's title sums the section up, and questions often name it. A first
heading that only repeats the note's title is not (every chunk already says the title).

Why paragraphs (measured, bench/query_quality.py, docs/index-format.md): formats 4-5
packed heading sections into chunks of up to 1,500 characters, so a tldr page (eight
examples) was one averaged vector and every example drowned. With
../shared/models/minilm-static-256, semantic MRR@10 on 1,000 hard tldr queries went
0.436 -> 0.948, on obsidian-tasks-docs 0.500 -> 0.670, on data-engineering-wiki 0.488 ->
0.621; BM25 over paragraphs also beat BM25 over sections (tldr 0.897 -> 0.952,
obsidian-tasks-docs 0.703 -> 0.725). Packing paragraphs up to 150 or 300 characters, or
windows of three sentences, ranked lower.

What the model reads (`embed_text`) is the chunk's heading path (less a first heading
that repeats the note's title), then its prose: code lines say little to a sentence
model and outweighed the description they belong to (tldr hard 0.769 with them, 0.948
without); a chunk of only code is embedded as it is. The note's title is left out: BM25
weighs it three times and a query naming a note finds it by name, while in the vector it
diluted the paragraph (1,000 hard tldr queries 0.948 -> 0.994; obsidian-tasks-docs 0.793
-> 0.827; with the transformer 0.936 -> 0.992 and 0.743 -> 0.759; the paraphrase sets
moved both ways within their noise). Emphasis inside words is dropped for the model as
for BM25 (`tokens.plain`: `**T**ranslation` is the word a reader sees). Version 3: that.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kbase_ci.index.tokens import plain
from kbase_ci.parse.outline import note_text, sections, split_lines
from kbase_ci.parsed import ParsedNote

VERSION = 3
MAX_CHARS = 1000
_FENCES = ("```", "~~~")
# A line that is nothing but inline code: `tar xf archive.tar`
_CODE_LINE = re.compile(r"^\s*`[^`].*`\s*$")
_NAME = re.compile(r"[\W_]+")


@dataclass(frozen=True, slots=True)
class Chunk:
    note: str
    """Vault-relative path of the note."""
    heading_path: tuple[str, ...]
    """Heading texts from the outermost to the section's own; () before the first heading."""
    start_line: int
    end_line: int
    """Inclusive 1-based line range in the note."""
    text: str
    """The paragraph's text (not stored in the index: the vault has it)."""

    def row(self) -> list[object]:
        return [self.note, list(self.heading_path), self.start_line, self.end_line]


def chunk_note(note: ParsedNote, data: bytes) -> list[Chunk]:
    """Chunks of one note in document order. A note the parser did not read has no
    headings, so it comes out as the paragraphs of its whole text."""
    lines = split_lines(note_text(data))
    out: list[Chunk] = []
    for sec in sections(note, "\n".join(lines)):
        first = sec.start_line
        if sec.heading is not None:
            first += 1
            if first <= len(lines) and not lines[sec.start_line - 1].lstrip(" >").startswith(
                    "#"):
                first += 1  # a setext heading's underline
            if context(note.title, sec.path):
                out.append(Chunk(note.path, sec.path, sec.start_line, first - 1,
                                 sec.heading.text))
        for lo, hi in paragraphs(lines, first, sec.end_line):
            out.append(Chunk(note.path, sec.path, lo, hi, "\n".join(lines[lo - 1:hi])))
    return out


def paragraphs(lines: Sequence[str], first: int, last: int) -> list[tuple[int, int]]:
    """Inclusive 1-based line ranges of the paragraphs in lines first..last."""
    blocks: list[list[int]] = []  # [start, end, chars, code]
    i = first
    while i <= last:
        if not lines[i - 1].strip():
            i += 1
            continue
        start, fence, only_code = i, "", True
        while i <= last:
            text = lines[i - 1]
            bare = text.lstrip(" >")
            if fence:
                if bare.startswith(fence):
                    fence = ""
            elif bare.startswith(_FENCES):
                fence = bare[:3]
            elif not text.strip():
                break
            elif not _CODE_LINE.match(text):
                only_code = False
            i += 1
        size = sum(len(ln) + 1 for ln in lines[start - 1:i - 1])
        if blocks and only_code and blocks[-1][2] + size <= MAX_CHARS:
            blocks[-1][1], blocks[-1][2] = i - 1, blocks[-1][2] + size
        else:
            blocks.append([start, i - 1, size, int(only_code)])
    out: list[tuple[int, int]] = []
    for start, end, size, code in blocks:
        if size <= MAX_CHARS or code:
            out.append((start, end))
            continue
        piece, acc = start, 0  # cut between lines (list items, long line runs)
        for n in range(start, end + 1):
            width = len(lines[n - 1]) + 1
            if acc + width > MAX_CHARS and n > piece:
                out.append((piece, n - 1))
                piece, acc = n, 0
            acc += width
        out.append((piece, end))
    return out


def prose(text: str) -> str:
    """`text` without its code (fenced blocks and lines of only inline code); all of it
    when nothing else is left."""
    kept: list[str] = []
    fence = ""
    for line in text.split("\n"):
        bare = line.lstrip(" >")
        if fence:
            if bare.startswith(fence):
                fence = ""
            continue
        if bare.startswith(_FENCES):
            fence = bare[:3]
            continue
        if not _CODE_LINE.match(line):
            kept.append(line)
    return "\n".join(kept).strip() or text


def context(title: str, heading_path: Sequence[str]) -> str:
    """`heading / subheading`, without a first heading that only repeats the note's
    title (most notes open with `# Title`)."""
    heads = list(heading_path)
    if heads and _NAME.sub("", heads[0].casefold()) == _NAME.sub("", title.casefold()):
        heads = heads[1:]
    return " / ".join(heads)


def embed_text(title: str, chunk: Chunk) -> str:
    """What the model reads for a chunk: where it is, then what it says."""
    where = context(title, chunk.heading_path)
    return plain(f"{where}\n{prose(chunk.text)}" if where else prose(chunk.text))
