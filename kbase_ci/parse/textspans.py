"""Spans of inline text that can hold no link or tag, by code point: CommonMark code
spans and `%%` comments, blanking them out, and the code point of a byte offset."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence

_NOT_NEWLINE = re.compile(r"[^\n]")
_CONTINUATION = re.compile(rb"[\x80-\xbf]")
_BACKTICKS = re.compile(r"`+")


class CharIndex:
    """Code-point offset of a byte offset in valid UTF-8, fast for long non-ASCII text.

    Short prefixes are simply decoded; past that, the offset is the byte offset minus
    the continuation bytes (0x80-0xBF) before it, found by bisection, so many lookups
    in one long line stay O(log n) each instead of O(n).
    """

    _SHORT = 2048

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._continuations: list[int] | None = None

    def char(self, b: int) -> int:
        if b <= self._SHORT:
            return len(self.data[:b].decode("utf-8", "replace"))
        if self._continuations is None:
            self._continuations = [m.start() for m in _CONTINUATION.finditer(self.data)]
        return b - bisect_left(self._continuations, b)


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each (start, end) span replaced by spaces, newlines kept."""
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for a, b in sorted(spans):
        a = max(a, pos)
        if b <= a:
            continue
        out.append(text[pos:a])
        out.append(" " * (min(b, len(text)) - a) if text.find("\n", a, b) < 0 else
                   _NOT_NEWLINE.sub(" ", text[a:b]))
        pos = b
    out.append(text[pos:])
    return "".join(out)


def comment_spans(masked: str, in_comment: bool) -> tuple[list[tuple[int, int]], bool]:
    """Spans of `%%...%%` comments (delimiters included), continuing an open one."""
    spans: list[tuple[int, int]] = []
    pos = 0
    if in_comment:
        j = masked.find("%%")
        if j < 0:
            return [(0, len(masked))], True
        spans.append((0, j + 2))
        pos = j + 2
    while True:
        i = masked.find("%%", pos)
        if i < 0:
            return spans, False
        j = masked.find("%%", i + 2)
        if j < 0:
            spans.append((i, len(masked)))
            return spans, True
        spans.append((i, j + 2))
        pos = j + 2


def code_spans(text: str, opaque: Sequence[tuple[int, int]] = ()) -> list[tuple[int, int]]:
    """CommonMark code spans: a backtick run closes at the next run of the same length.

    A run after an odd number of backslashes starts one backtick later (the first is
    escaped), but only where a span opens: inside one a backslash is text. Runs inside
    `opaque` spans (sorted: HTML tags, autolinks, which start first and bind as tightly)
    count for nothing. tree-sitter-markdown closes a span at a *longer* run (``` `` ```
    inside a ```` ``` ```` span ends it), which hid the links after such a span."""
    runs: list[tuple[int, int]] = []
    ends = [b for _a, b in opaque]
    for m in _BACKTICKS.finditer(text):
        k = bisect_right(ends, m.start())
        if k < len(opaque) and opaque[k][0] <= m.start():
            continue
        runs.append((m.start(), m.end()))
    by_length: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(runs):
        by_length.setdefault(b - a, []).append(i)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        start, end = runs[i]
        slashes = 0
        while start - slashes > 0 and text[start - slashes - 1] == "\\":
            slashes += 1
        start += slashes % 2  # `\``: the escaped backtick is text; the rest may open
        same = by_length.get(end - start, [])
        k = bisect_right(same, i)
        if end == start or k >= len(same):
            i += 1  # an unmatched run is literal text
            continue
        j = same[k]
        spans.append((start, runs[j][1]))
        i = j + 1
    return spans


def in_spans(span: tuple[int, int], code: list[tuple[int, int]], starts: list[int]) -> bool:
    """Whether `span` starts or ends inside one of the sorted `code` spans."""
    for pos in (span[0], span[1] - 1):
        k = bisect_right(starts, pos) - 1
        if k >= 0 and pos < code[k][1]:
            return True
    return False
