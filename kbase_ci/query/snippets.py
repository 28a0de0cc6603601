"""What a search hit shows of its note: the section and line where the query's words are,
and a snippet around them."""

from __future__ import annotations

import re
from typing import Protocol

from kbase_ci.parse.outline import split_lines
from kbase_ci.query.view import QueryView


class Located(Protocol):
    path: str

    @property
    def start_line(self) -> int: ...

    @property
    def end_line(self) -> int: ...


_WORD = re.compile(r"\w{2,}")


def snippet(view: QueryView, hit: Located, query: str, width: int = 240) -> str:
    lines = split_lines(view.text(hit.path))[hit.start_line - 1:hit.end_line]
    text = " ".join(ln.strip() for ln in lines if ln.strip())
    words = [w.casefold() for w in _WORD.findall(query)]
    low = text.casefold()
    pos = min((p for p in (low.find(w[:max(4, len(w) - 2)]) for w in words) if p >= 0),
              default=0)
    start = max(0, pos - width // 3)
    piece = text[start:start + width]
    return ("\u2026" if start else "") + piece + ("\u2026" if start + width < len(text) else "")


def focus(view: QueryView, hit: Located, query: str) -> tuple[str | None, int]:
    """The heading path and line of the first line in the chunk holding a query word:
    short sections are packed into one chunk, and the agent wants the one that matched."""
    lines = split_lines(view.text(hit.path))
    words = [w.casefold()[:max(4, len(w) - 2)] for w in _WORD.findall(query)]
    line = hit.start_line
    for n in range(hit.start_line, min(hit.end_line, len(lines)) + 1):
        low = lines[n - 1].casefold()
        if any(w in low for w in words):
            line = n
            break
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
