"""The one reader of the fixture tables (`fixtures/**/*.txt`): one case per line.

In every table `#` at the start of a line is a comment and blank lines are skipped. A
case is `input ⇒ expected` (`ARROW`), or cells separated by ` | ` (`CELL`) where no cell
holds Markdown (a wikilink alias `[[a|b]]` holds a `|`, so such tables use the arrow).
Inside an input, `decode` reads ↵ as a newline, → as a tab, `{N×text}` as text repeated
N times and `\\xNN` as that byte.
"""

from __future__ import annotations

import re
from pathlib import Path

ARROW = " ⇒ "
CELL = " | "
NONE = "-"
"""An expected side with nothing in it."""


def lines(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of every case line of a table, text as written."""
    return [(no, line) for no, line in
            enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if line.strip() and not line.startswith("#")]


def arrows(path: Path) -> list[tuple[int, str, str]]:
    """(line number, input as written, expected stripped) of an `input ⇒ expected` table."""
    out = []
    for no, line in lines(path):
        given, sep, expected = line.rpartition(ARROW)
        assert sep, f"{path.name}:{no}: missing {ARROW.strip()!r}"
        out.append((no, given, expected.strip()))
    return out


def cells(path: Path) -> list[tuple[int, list[str]]]:
    """(line number, stripped cells) of a ` | ` table."""
    return [(no, [c.strip() for c in line.split(CELL)]) for no, line in lines(path)]


def items(expected: str, sep: str = " ; ") -> list[str]:
    """The items of an expected side (`-`: none)."""
    return [] if expected == NONE else [i.strip() for i in expected.split(sep)]


_REPEAT = re.compile(r"\{(\d+)×(.*?)\}")
_BYTE = re.compile(r"\\x([0-9a-fA-F]{2})")


def decode(text: str) -> bytes:
    """An input's bytes: ↵ newline, → tab, `{N×text}` repetition, `\\xNN` a byte."""
    text = _REPEAT.sub(lambda r: r.group(2) * int(r.group(1)), text)
    text = text.replace("↵", "\n").replace("→", "\t")
    parts = _BYTE.split(text)
    return b"".join(bytes([int(p, 16)]) if i % 2 else p.encode("utf-8")
                    for i, p in enumerate(parts))
