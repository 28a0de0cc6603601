"""Rewriting a file at the parser's link positions, byte for byte, and replacing it whole.

`apply_edits` changes a file only where the parser recorded a link, after checking the
old text is really there, so code blocks and look-alikes elsewhere are never touched.
Columns count code points of the parser's decoding (one U+FFFD per bad UTF-8 sequence),
lines end at any of CRLF, CR and LF, and a BOM is not part of line 1: all as the parser
sees a note. Everything else (CRLF, bad bytes, BOM) stays exactly as it was.
The file is then replaced whole, only if unchanged since it was read
(kbase_ci.vault.safefs.write_atomic).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_NEWLINE = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace `old` (a link as the parser recorded it) at `line:col` of `path` with `new`."""

    path: str
    line: int
    col: int
    old: str
    new: str


def apply_edits(data: bytes, edits: Sequence[Edit]) -> tuple[bytes, list[Edit]]:
    """`data` with every edit applied, and the edits whose old text was not at their
    position (left out: the file changed since it was parsed)."""
    starts = _line_starts(data)
    spans: list[tuple[int, int, Edit]] = []
    missed: list[Edit] = []
    for e in edits:
        span = _locate(data, starts, e)
        if span is None:
            missed.append(e)
        else:
            spans.append((*span, e))
    spans.sort(key=lambda s: s[0])
    kept: list[tuple[int, int, Edit]] = []
    for s in spans:
        if kept and s[0] < kept[-1][1]:
            missed.append(s[2])  # overlapping edits cannot both be right
        else:
            kept.append(s)
    out = bytearray(data)
    for a, b, e in reversed(kept):
        out[a:b] = _with_newlines(e.new, data[a:b])
    return bytes(out), missed


def _line_starts(data: bytes) -> list[int]:
    first = 3 if data.startswith(b"\xef\xbb\xbf") else 0  # the parser drops the BOM
    return [first, *(m.end() for m in _NEWLINE.finditer(data))]


def _locate(data: bytes, starts: list[int], e: Edit) -> tuple[int, int] | None:
    if not 1 <= e.line <= len(starts) or e.col < 1:
        return None
    start = starts[e.line - 1]
    end = starts[e.line] if e.line < len(starts) else len(data)
    line = data[start:end]
    pieces = [p.encode("utf-8") for p in e.old.split("\n")]
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        # Columns count the parser's decoding (one U+FFFD per bad sequence): try each
        # place the link's bytes occur and keep the one at that column.
        for m in re.finditer(re.escape(pieces[0]), line):
            if len(line[:m.start()].decode("utf-8", "replace")) == e.col - 1:
                return _match(data, start + m.start(), pieces)
        return None
    if e.col - 1 > len(text):
        return None
    return _match(data, start + len(text[:e.col - 1].encode("utf-8")), pieces)


def _match(data: bytes, at: int, pieces: list[bytes]) -> tuple[int, int] | None:
    """End of `pieces` joined by any newline (\\r\\n, \\r, \\n) starting at `at`."""
    pos = at
    for i, piece in enumerate(pieces):
        if data[pos:pos + len(piece)] != piece:
            return None
        pos += len(piece)
        if i < len(pieces) - 1:
            m = _NEWLINE.match(data, pos)
            if m is None:
                return None
            pos = m.end()
    return at, pos


def _with_newlines(new: str, old_bytes: bytes) -> bytes:
    """`new` encoded, its line breaks spelled like the replaced text's (CRLF stays CRLF)."""
    m = _NEWLINE.search(old_bytes)
    nl = m.group(0) if m else b"\n"
    return nl.join(p.encode("utf-8") for p in new.split("\n"))
