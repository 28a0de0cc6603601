"""What a search hit shows of its note: the section and line where the query's words are
(its best line: the most of them, never an embed or image), and a snippet around it; and
the sentence a place sits in (`Sentences`: a link's, a mention's, a passage's). The words
looked for are the query's `prefixes` (kbase_ci.query.queryterms.QueryTerms)."""

from __future__ import annotations

import re
from bisect import bisect_right
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


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_MAX_SENTENCE = 300


def sentence_at(line_text: str, col: int) -> str:
    """The sentence of `line_text` holding column `col` (1-based, code points)."""
    return Sentences(line_text).at(col)


class Sentences:
    """One line cut into sentences once (state: the cut and the sentences trimmed so
    far), so the links of a line with 20k of them are answered by bisection: cutting the
    line again per link was quadratic (minutes for one note)."""

    def __init__(self, line_text: str) -> None:
        self._line = line_text
        self._starts: list[int] = []
        self._pieces: list[str] = []
        start = 0
        for piece in _SENTENCE_END.split(line_text):
            pos = line_text.find(piece, start)
            self._starts.append(pos)
            self._pieces.append(piece)
            start = pos + len(piece)
        self._trimmed: dict[int, str] = {}

    def _holds(self, i: int, col: int) -> bool:
        return self._starts[i] <= col - 1 < self._starts[i] + len(self._pieces[i]) + 1

    def at(self, col: int) -> str:
        i = bisect_right(self._starts, col - 1) - 1
        while i > 0 and self._holds(i - 1, col):  # the first sentence holding it wins
            i -= 1
        if not (i >= 0 and self._holds(i, col)):
            i = -1  # in no sentence: the whole line
        if i not in self._trimmed:
            text = self._pieces[i] if i >= 0 else self._line
            self._trimmed[i] = _trim(text.strip())
        return self._trimmed[i]


def _trim(text: str) -> str:
    text = text.lstrip("-*+> ").strip()
    return text if len(text) <= _MAX_SENTENCE else text[:_MAX_SENTENCE - 1] + "\u2026"
