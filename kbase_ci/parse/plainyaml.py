"""Frontmatter in block YAML of plain shapes, read without ruamel.

Loading frontmatter through ruamel costs ~0.3 ms a note after a ~60 ms import: on a
vault with frontmatter on every note, a fifth of a cold `kbase check`. Real frontmatter
is nearly always a few shapes, which `load_plain` reads here and gives exactly what
ruamel gives (YAML 1.2, `to_json_safe`'s JSON forms); anything else answers None and
ruamel reads it as before:

- a mapping at column 0; nested mappings and block sequences by indentation (a sequence
  may sit at its key's column), `- key: value` items; blank and `# comment` lines;
- keys: a word character, then anything but spaces, `:`, `#`, brackets, braces, commas
  and quotes, words joined by single spaces; no key twice (ruamel reports a repeat:
  KB302);
- values on one line: plain scalars (`null`/`~`, `true`/`false` in their three
  spellings, decimal integers and floats, dates and `YYYY-MM-DD HH:MM:SS` times,
  anything else is a string), `'single'` and `"double"` quoted strings (the common
  escapes), one-line flow lists of those (`[a, "b c"]`), `{}`; a trailing ` # comment`;
- block scalars `|` and `>` with `-`, `+` or no chomping indicator.

Not read here (ruamel's): tabs, characters YAML forbids or reads as line breaks, an
indentation indicator, multi-line plain or quoted scalars, more-indented lines of a
folded scalar, anchors, aliases, tags, directives, explicit `?` keys, quoted keys, flow
mappings, nested flow lists, other numbers (`0x1`, `1_000`, `1e3`, `.inf`), other
timestamps and anything YAML would refuse. `tests/unit/parse/test_plainyaml.py` compares
it with ruamel on a fixture table; `tests/slow/test_plainyaml_corpora.py` on every
frontmatter block of the shared vaults.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

# Tabs and what YAML forbids (C0 controls, surrogates, U+FFFE/FFFF) or reads as a line
# break (NEL, LS, PS), and a BOM: each has its own rules, left to ruamel.
_REFUSED = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
                      "\U00010000-\U0010ffff]")
# A key: one word character, then words joined by single spaces. Every step consumes
# one character one way, so a failing line costs linear time (see the long-space test).
_KEY = re.compile(r"(\w(?:[^\s:#\[\]{},'\"]| (?=[^\s:#\[\]{},'\"]))*):(?= |$)")
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2}):([0-9]{2}))?")
# ruamel's (YAML 1.2) implicit float, int and timestamp patterns: a plain scalar one of
# them matches is a number or a time to ruamel, so it is not a string here.
_NUMERIC = re.compile(r"""(?x)
    [-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)? | [-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
  | [-+]?\.[0-9_]+(?:[eE][-+][0-9]+)? | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
  | [-+]?0b[0-1_]+ | [-+]?0o?[0-7_]+ | [-+]?[0-9_]+ | [-+]?0x[0-9a-fA-F_]+
  | [0-9]{4}-[0-9]{2}-[0-9]{2}
  | [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?
    (?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?""")
_CONSTANTS: dict[str, Any] = {"": None, "~": None, "null": None, "Null": None, "NULL": None,
                              "true": True, "True": True, "TRUE": True, "false": False,
                              "False": False, "FALSE": False}
_ESCAPES = {"\\": "\\", '"': '"', "/": "/", "n": "\n", "t": "\t", "r": "\r", "0": "\0",
            " ": " ", "b": "\b", "f": "\f", "e": "\x1b", "a": "\x07", "v": "\x0b"}
_HEX = {"x": 2, "u": 4, "U": 8}
_STOPS = {"'": re.compile("'"), '"': re.compile(r'["\\]')}
_FLOW_PLAIN = re.compile(r"[^\s,\[\]{}#:?'\"&*!|>%@`-][^,\[\]{}#:]*")
_BLOCK_HEADER = re.compile(r"([|>])([+-]?) *(?:(?<= )#.*)?")
_MAX_DEPTH = 32
"""Deeper frontmatter (real frontmatter nests a few levels) is ruamel's to read, after
load_yaml's depth bound; this reader's recursion stays this shallow."""


class _Unread(Exception):
    """Outside the subset: ruamel reads it."""


def load_plain(raw: str) -> dict[str, Any] | None:
    """The mapping `raw` loads to, when it is within the subset; None otherwise."""
    if _REFUSED.search(raw) is not None:
        return None
    lines = raw.split("\n")
    ended = lines[-1] == ""
    if ended:
        lines.pop()
    try:
        return _Reader(lines, ended).document() or None
    except _Unread:
        return None


def _scalar(text: str) -> Any:
    """A plain scalar's value, as ruamel resolves and to_json_safe writes it."""
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    if text[0] in "-+.0123456789":
        if len(text) > 40 and _NUMERIC.fullmatch(text):
            raise _Unread  # past float's range, or int()'s digit limit (a ValueError)
        if _INT.fullmatch(text):
            return int(text)
        if _FLOAT.fullmatch(text):
            return float(text)
        m = _DATE.fullmatch(text)
        if m is not None:
            try:
                parts = [int(p) for p in m.groups() if p is not None]
                day = dt.date(parts[0], parts[1], parts[2])
                when = day if len(parts) == 3 else dt.datetime.combine(
                    day, dt.time(parts[3], parts[4], parts[5]))
            except ValueError:  # ruamel refuses it: KB301
                raise _Unread from None
            return when.isoformat()
        if _NUMERIC.fullmatch(text):
            raise _Unread
    elif text in ("<<", "="):  # merge and value keys
        raise _Unread
    return text


def _key(text: str) -> str:
    value = _scalar(text)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _plain(text: str) -> Any:
    """A plain scalar in block context, `text` stripped of a trailing comment."""
    cut = text.find(" #")
    if cut >= 0:
        text = text[:cut]
    text = text.rstrip(" ")
    if ": " in text or text.endswith(":"):
        raise _Unread  # a mapping where YAML allows none
    return _scalar(text)


def _quoted(text: str, start: int = 0) -> tuple[str, int]:
    """The string quoted at `text[start]` and the offset after its closing quote."""
    quote = text[start]
    out: list[str] = []
    i = start + 1
    while True:
        stop = _STOPS[quote].search(text, i)
        if stop is None:
            raise _Unread  # runs over lines
        j = stop.start()
        out.append(text[i:j])
        if quote == "'":
            if text[j + 1:j + 2] == "'":
                out.append("'")
                i = j + 2
                continue
            return "".join(out), j + 1
        if text[j] == '"':
            return "".join(out), j + 1
        code = text[j + 1:j + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i = j + 2
        elif code in _HEX:
            digits = text[j + 2:j + 2 + _HEX[code]]
            if len(digits) != _HEX[code] or not all(c in "0123456789abcdefABCDEF"
                                                      for c in digits):
                raise _Unread
            point = int(digits, 16)
            if 0xD800 <= point <= 0xDFFF or point > 0x10FFFF:
                raise _Unread  # surrogates: to_json_safe's to mend
            out.append(chr(point))
            i = j + 2 + len(digits)
        else:
            raise _Unread


def _flow_list(text: str) -> tuple[list[Any], int]:
    """A one-line flow sequence of scalars at the start of `text`, and where it ends."""
    items: list[Any] = []
    i = 1
    while True:
        while text[i:i + 1] == " ":
            i += 1
        if text[i:i + 1] == "]" and not items:
            return items, i + 1
        if text[i:i + 1] in ("'", '"'):
            value, i = _quoted(text, i)
        else:
            m = _FLOW_PLAIN.match(text, i)
            if m is None:
                raise _Unread  # empty, nested, a mapping, a comment or an indicator
            value, i = _scalar(m.group().rstrip(" ")), m.end()
        items.append(value)
        while text[i:i + 1] == " ":
            i += 1
        if text[i:i + 1] == "]":
            return items, i + 1
        if text[i:i + 1] != ",":
            raise _Unread
        i += 1


def _dash(content: str) -> bool:
    """Whether a line's content is a block sequence entry (`- x`, or `-` alone)."""
    return content[:2] == "- " or content == "-"


def _ends_clean(tail: str) -> bool:
    """Nothing, or a comment, after a value."""
    rest = tail.lstrip(" ")
    return not rest or (rest[0] == "#" and len(rest) < len(tail))


class _Reader:
    """Recursive descent over the lines; `i` is the next line to read."""

    def __init__(self, lines: list[str], ended: bool) -> None:
        self.lines = lines
        self.ended = ended
        """Whether the last line ends with a line break (frontmatter's always does)."""
        self.i = 0
        self.depth = 0

    def _next(self) -> tuple[int, str] | None:
        """(column, content) of the next line that is no blank or comment line."""
        lines = self.lines
        while self.i < len(lines):
            line = lines[self.i]
            content = line.lstrip(" ")
            if content and content[0] != "#":
                return len(line) - len(content), content
            self.i += 1
        return None

    def document(self) -> dict[str, Any]:
        first = self._next()
        if first is None:
            return {}
        if first[0] != 0:
            raise _Unread
        data = self._mapping(0, None)
        if self._next() is not None:
            raise _Unread  # a line less indented than the nesting it follows
        return data

    def _entry(self, col: int) -> str | None:
        """The next line's content when it is at column `col`, None where the block at
        `col` ends (a shallower line, the end); a deeper line is no YAML this reads."""
        at = self._next()
        if at is None or at[0] < col:
            return None
        if at[0] > col:
            raise _Unread
        return at[1]

    def _enter(self) -> None:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _Unread

    def _mapping(self, col: int, first: str | None) -> dict[str, Any]:
        """Entries at column `col`; `first` is a compact entry's text after its `- `."""
        self._enter()
        data: dict[str, Any] = {}
        while True:
            content, first = first or self._entry(col), None
            if content is None:
                break
            m = _KEY.match(content)
            if m is None:
                if _dash(content):
                    break  # a sequence at its key's column goes on
                raise _Unread
            key = _key(m.group(1))
            if key in data:
                raise _Unread
            self.i += 1
            data[key] = self._value(content[m.end():], col, True)
        self.depth -= 1
        return data

    def _sequence(self, col: int) -> list[Any]:
        self._enter()
        items: list[Any] = []
        while True:
            content = self._entry(col)
            if content is None or not _dash(content):
                break  # a shallower line, or the key after a sequence at its key's column
            after = content[1:]
            text = after.lstrip(" ")
            if _dash(text) or text[:2] == "? " or text == "?":
                raise _Unread  # compact nesting
            if text and text[0] not in "'\"[{|>&*!" and _KEY.match(text) is not None:
                items.append(self._mapping(col + 1 + len(after) - len(text), text))
            else:
                self.i += 1
                items.append(self._value(after, col, False))
        self.depth -= 1
        return items

    def _value(self, rest: str, col: int, keyed: bool) -> Any:
        """The value after `key:` or `- ` (`rest`) of a node at column `col`."""
        text = rest.lstrip(" ")
        if not text or text[0] == "#":
            return self._below(col, keyed)
        head = text[0]
        value: Any
        if head in "'\"":
            value, end = _quoted(text)
        elif head == "[":
            value, end = _flow_list(text)
        elif head == "{":
            if text[:2] != "{}":
                raise _Unread
            value, end = {}, 2
        elif head in "|>":
            return self._block_scalar(text, col)
        elif head in "&*!%@`,]}#?:" or (head == "-" and text[1:2] in ("", " ")):
            raise _Unread
        else:
            value, end = _plain(text), len(text)
        if not _ends_clean(text[end:]):
            raise _Unread
        return value

    def _below(self, col: int, keyed: bool) -> Any:
        """A node on the lines under a `key:` or `-` with nothing after it."""
        at = self._next()
        if at is None:
            return None
        dash = _dash(at[1])
        if at[0] > col:
            return self._sequence(at[0]) if dash else self._mapping(at[0], None)
        if at[0] == col and dash and keyed:
            return self._sequence(col)
        return None

    def _block_scalar(self, header: str, col: int) -> str:
        m = _BLOCK_HEADER.fullmatch(header)
        if m is None:
            raise _Unread  # an indentation indicator, or text after the header
        style, chomp = m.groups()
        lines = self.lines
        body: list[str] = []
        indent = -1
        while self.i < len(lines):
            line = lines[self.i]
            content = line.lstrip(" ")
            at = len(line) - len(content)
            if not content:
                if at > max(indent, 0):
                    raise _Unread  # spaces that may be content, or an error
                body.append("")
            elif indent < 0 and at <= col:
                break
            elif indent < 0:
                indent = at
                body.append(content)
            elif at < indent:
                break
            else:
                body.append(line[indent:])
            self.i += 1
        if self.i == len(lines) and not self.ended:
            raise _Unread  # the last line break, which chomping counts, is missing
        end = len(body)
        while end and body[end - 1] == "":
            end -= 1
        if end == 0:
            if chomp == "+":
                raise _Unread
            return ""
        start = 0
        while body[start] == "":  # leading empty lines: a line break each, either style
            start += 1
        kept = body[start:end]
        if style == "|":
            text = "\n" * start + "\n".join(kept)
        else:
            text = "\n" * start + kept[0]
            empties = 0
            for line in kept[1:]:
                if not line:
                    empties += 1
                    continue
                if line[0] == " ":
                    raise _Unread  # a more-indented line keeps its line breaks
                text += ("\n" * empties if empties else " ") + line
                empties = 0
        if chomp == "-":
            return text
        return text + "\n" * (1 + (len(body) - end if chomp == "+" else 0))
