"""A note's text: its bytes decoded (bad UTF-8 located), the line and column of an
offset into it, and its line count."""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

from kbase_ci.parse.textspans import CharIndex
from kbase_ci.parsed import Diagnostic


class NoteLines:
    """Code-point line/col of byte offsets in the note, cheap for ASCII text.

    Line tables are built on first use: many notes have no link or tag at all.
    """

    def __init__(self, text: str, src: bytes) -> None:
        self.text = text
        self.src = src
        self.ascii = len(text) == len(src)
        self._starts: list[int] = []
        self._byte_starts: list[int] = []
        self._rows: dict[int, CharIndex] = {}  # per-line byte->char, for long lines

    @staticmethod
    def _line_starts(text: str | bytes) -> list[int]:
        """Offset of each line's start: one C-level split, then running sums."""
        sep = "\n" if isinstance(text, str) else b"\n"
        starts = [0, *accumulate(len(line) + 1 for line in text.split(sep))]  # type: ignore[arg-type]
        starts.pop()
        return starts

    def char_offset(self, b: int) -> int:
        if self.ascii:
            return b
        if not self._byte_starts:
            self._byte_starts = self._line_starts(self.src)
        row = bisect_right(self._byte_starts, b) - 1
        line_start = self._byte_starts[row]
        index = self._rows.get(row)
        if index is None:
            end = self._byte_starts[row + 1] if row + 1 < len(self._byte_starts) else None
            index = self._rows[row] = CharIndex(self.src[line_start:end])
        return self.at_row_start(row) + index.char(b - line_start)

    def at_row_start(self, row: int) -> int:
        if not self._starts:
            self._starts = self._line_starts(self.text)
        return self._starts[row]

    def at(self, offset: int) -> tuple[int, int]:
        """(line, col), both 1-based, of a code-point offset."""
        if not self._starts:
            self._starts = self._line_starts(self.text)
        row = bisect_right(self._starts, offset) - 1
        return row + 1, offset - self._starts[row] + 1


def decode(data: bytes) -> tuple[str, Diagnostic | None]:
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        bad = exc.start
        before = data[:bad].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        line = before.count(b"\n") + 1
        prefix = before[before.rfind(b"\n") + 1:]
        if line == 1 and prefix.startswith(b"\xef\xbb\xbf"):
            prefix = prefix[3:]
        col = len(prefix.decode("utf-8", "replace")) + 1
        diag = Diagnostic("KB001", f"invalid UTF-8 (byte 0x{data[bad]:02x}); decoded with "
                          "replacement characters", line, col, "warning")
        return data.decode("utf-8", "replace"), diag


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
