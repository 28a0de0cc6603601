"""What a search hit shows of its note: the section and line where the query's words are
(its best line: the most of them, never an embed or image), and a snippet around it. The
words looked for are the query's `prefixes` (kbase_ci.query.queryterms.QueryTerms)."""

from __future__ import annotations

import re
from typing import Protocol

from kbase_ci.parse.outline import split_lines
from kbase_ci.query.queryterms import QueryTerms
from kbase_ci.query.view import QueryView


class Located(Protocol):
    path: str

    @property
    def start_line(self) -> int: ...

    @property
    def end_line(self) -> int: ...


_EMBED = re.compile(r"!\[\[[^\]]*\]\]|!\[[^\]]*\]\([^)]*\)")
"""An embed or image (`![[x.png|500]]`, `![alt](x.png)`): nothing to read in a snippet."""


def _text(line: str) -> str:
    return _EMBED.sub("", line).strip()


def best_line(lines: list[str], lo: int, hi: int, q: QueryTerms) -> int | None:
    """The line of `lo..hi` (1-based) holding the most of the query's words, the first
    of equals; never an embed or image line. None: no line holds any."""
    words = q.prefixes
    best, most = None, 0
    for n in range(lo, min(hi, len(lines)) + 1):
        low = _text(lines[n - 1]).casefold()
        got = sum(1 for w in set(words) if w in low)
        if got > most:
            best, most = n, got
    return best


def snippet(view: QueryView, hit: Located, q: QueryTerms, width: int = 240) -> str:
    """About `width` characters of the chunk's text from around its best line (embeds
    and images left out)."""
    lines = split_lines(view.text(hit.path))
    at = best_line(lines, hit.start_line, hit.end_line, q)
    parts: list[str] = []
    pos = 0
    for n in range(hit.start_line, min(hit.end_line, len(lines)) + 1):
        piece = _text(lines[n - 1])
        if not piece:
            continue
        if n == at:
            low = piece.casefold()
            inside = min((p for p in (low.find(w) for w in q.prefixes) if p >= 0),
                         default=0)
            pos = sum(len(x) + 1 for x in parts) + inside
        parts.append(piece)
    text = " ".join(parts)
    start = max(0, pos - width // 3)
    piece = text[start:start + width]
    return ("\u2026" if start else "") + piece + ("\u2026" if start + width < len(text) else "")


def focus(view: QueryView, hit: Located, q: QueryTerms) -> tuple[str | None, int]:
    """The heading path and line of the chunk's best line (`best_line`): short sections
    are packed into one chunk, and the agent wants the one that matched."""
    lines = split_lines(view.text(hit.path))
    line = best_line(lines, hit.start_line, hit.end_line, q) or hit.start_line
    stack: list[tuple[int, str]] = []
    for level, text, at in view.notes[hit.path].headings:
        if at > line:
            break
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
    return (" > ".join(t for _, t in stack) or None), line


def chunk_text(view: QueryView, hit: Located) -> str:
    """The lines of a chunk hit (its body, for telling which fields matched)."""
    return "\n".join(split_lines(view.text(hit.path))[hit.start_line - 1:hit.end_line])
