"""YAML frontmatter: split it off, load it safely, pull out aliases, tags and links.

Input is note text with the BOM removed and line endings normalised to `\\n`.
Every problem becomes a Diagnostic located in the file (the YAML itself starts
on line 2, after the opening `---`); nothing here raises on bad input.

Loading the YAML is kbase_ci.parse.yamlload's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kbase_ci.parse.properties import property_links
from kbase_ci.parse.yamlload import YamlMemo, load_yaml
from kbase_ci.parsed import Diagnostic, Link, Tag

# YamlMemo: its callers import it from here, beside parse_frontmatter.
__all__ = ["Frontmatter", "YamlMemo", "parse_frontmatter", "split"]

_CLOSE = re.compile(r"^---[ \t]*$", re.MULTILINE)
_TOP_KEY = re.compile(r"""(?:"([^"]*)"|'([^']*)'|([^\s#\-?:'"][^:]*?))[ \t]*:(?:[ \t]|$)""")
_BLOCK_SCALAR = re.compile(r":[ \t]*[|>][0-9+-]*[ \t]*$")
_TAG_SPLIT = re.compile(r"[,\s]+")


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """A note's YAML frontmatter as loaded, with the keys kbase reads pulled out."""

    data: dict[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    tags: tuple[Tag, ...] = ()
    links: tuple[Link, ...] = ()
    end_line: int = 0
    """Line of the closing `---` (0 when there is no frontmatter)."""
    body_start: int = 0
    """Offset (in code points) where the Markdown body starts."""
    diagnostics: tuple[Diagnostic, ...] = ()


def split(text: str) -> tuple[str | None, int, int, Diagnostic | None]:
    """(yaml text or None, closing line, body offset, KB303 diagnostic or None)."""
    first_nl = text.find("\n")
    first = text if first_nl < 0 else text[:first_nl]
    if first.rstrip(" \t") != "---":
        return None, 0, 0, None
    m = _CLOSE.search(text, first_nl + 1) if first_nl >= 0 else None
    if m is None:
        return None, 0, 0, Diagnostic("KB303", "unterminated frontmatter: no closing `---` line",
                                      1, 1, "error")
    end_line = text.count("\n", 0, m.start()) + 1
    body = m.end() + 1 if m.end() < len(text) else m.end()
    return text[first_nl + 1:m.start()], end_line, body, None


def _strings(value: Any, split_ws: bool) -> list[str]:
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        if item is None or isinstance(item, (dict, list)):
            continue
        s = str(item)
        if isinstance(value, str):
            parts = _TAG_SPLIT.split(s) if split_ws else s.split(",")
        else:
            parts = [s]
        for p in parts:
            p = p.strip()
            if split_ws:
                p = p.lstrip("#")
            if p:
                out.append(p)
    return out


def _values(data: dict[str, Any], *names: str) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in data.items() if k.lower() in names]


def _without_comment(line: str) -> str:
    if "#" not in line:
        return line
    quote = ""
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
        i += 1
    return line


class _RawLines:
    """Raw frontmatter lines tagged with their top-level key, comments removed."""

    def __init__(self, raw: str) -> None:
        self.rows: list[tuple[str, str]] = []  # (top-level key, line text)
        key = ""
        literal_indent = -1
        for line in raw.split("\n"):
            indent = len(line) - len(line.lstrip(" "))
            if literal_indent >= 0 and (indent > literal_indent or not line.strip()):
                self.rows.append((key, line))  # inside a block scalar: `#` is text
                continue
            literal_indent = -1
            text = _without_comment(line)
            m = _TOP_KEY.match(text)
            if m is not None:
                key = next(g for g in m.groups() if g is not None)
            if _BLOCK_SCALAR.search(text.rstrip()):
                literal_indent = indent
            self.rows.append((key, text))

    def find(self, key: str, needle: str, after: tuple[int, int]) -> tuple[int, int] | None:
        """First (row, col) of `needle` in `key`'s lines at or after `after` (0-based)."""
        for row in range(after[0], len(self.rows)):
            k, text = self.rows[row]
            if k != key:
                continue
            start = after[1] if row == after[0] else 0
            m = _TOP_KEY.match(text)
            if m is not None:  # on the key's own line, look only at the value
                start = max(start, m.end())
            col = text.find(needle, start)
            if col >= 0:
                return row, col
        return None


def _tags(values: list[tuple[str, Any]], lines: _RawLines) -> list[Tag]:
    tags: list[Tag] = []
    for key, value in values:
        cursor = (0, 0)
        for name in _strings(value, split_ws=True):
            pos = lines.find(key, name, cursor)
            if pos is None:
                tags.append(Tag(name, 2, 1, "frontmatter"))
                continue
            cursor = (pos[0], pos[1] + len(name))
            tags.append(Tag(name, pos[0] + 2, pos[1] + 1, "frontmatter"))
    return tags


def parse_frontmatter(text: str, memo: YamlMemo | None = None) -> Frontmatter:
    raw, end_line, body_start, problem = split(text)
    if raw is None:
        return Frontmatter(diagnostics=(problem,) if problem else ())
    data, problem = memo.load(raw) if memo is not None else load_yaml(raw)
    diags = (problem,) if problem else ()
    if not data:
        return Frontmatter(end_line=end_line, body_start=body_start, diagnostics=diags)
    aliases = [a for _, v in _values(data, "aliases", "alias") for a in _strings(v, False)]
    tag_values = _values(data, "tags", "tag")
    # Positions need the raw lines; most frontmatter has neither tags nor links.
    linked = "[[" in raw or "](" in raw
    lines = _RawLines(raw) if tag_values or linked else None
    return Frontmatter(
        data=data,
        aliases=tuple(aliases),
        tags=tuple(_tags(tag_values, lines)) if lines else (),
        links=tuple(property_links(data, lines.find)) if lines and linked else (),
        end_line=end_line,
        body_start=body_start,
        diagnostics=diags,
    )
