"""Turn the text of one link (`[[a#b|c]]`, `[t](a.md#b)`) into a `Link` record.

Shared by the parser (which finds links in notes) and by anything that takes a
link typed by a user, so both agree on what `target`, `subpath` and `alias` mean.
"""

from __future__ import annotations

import re

from kbase_ci.errors import UsageError
from kbase_ci.parsed import Link

# A URL scheme; one letter followed by `:` is a Windows drive (`C:\x`), not a scheme.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")
# decodeURI leaves escapes of these characters encoded: `%3A` stays `%3A` (rule 11).
_URI_RESERVED = frozenset(";/?:@&=+$,#")
_HEX = frozenset("0123456789abcdefABCDEF")
# CommonMark: a backslash before ASCII punctuation in a destination is an escape.
_ESCAPED = re.compile(r"""\\([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])""")
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2})+")
# An optional link title after the destination: "t", 't' or (t).
_TITLE = re.compile(r"""\s+(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\))\s*$""",
                    re.DOTALL)


def is_external(dest: str) -> bool:
    """True for `scheme:` destinations (http:, mailto:, obsidian:, file:, ...)."""
    return _SCHEME.match(dest) is not None


def _split_alias(inner: str) -> tuple[str, str | None]:
    # Inside tables the pipe must be written `\|`; Obsidian still treats it as the separator.
    bar = inner.find("|")
    if bar < 0:
        return inner, None
    head = inner[:bar - 1] if bar > 0 and inner[bar - 1] == "\\" else inner[:bar]
    return head, inner[bar + 1:].strip()


def _split_subpath(part: str) -> tuple[str, str]:
    target, sep, subpath = part.partition("#")
    return target.strip(), subpath.strip() if sep else ""


def wikilink_from_raw(raw: str, line: int = 1, col: int = 1) -> Link:
    """`[[t#h|a]]` or `![[t#^id|a]]` -> Link(style="wiki")."""
    embed = raw.startswith("!")
    body = raw[1:] if embed else raw
    if not (body.startswith("[[") and body.endswith("]]")) or len(body) < 4:
        raise UsageError(f"not a wikilink: {raw!r}")
    head, alias = _split_alias(body[2:-2])
    target, subpath = _split_subpath(head)
    return Link("wiki", embed, raw, target, subpath, alias, line, col)


def _clean_dest(dest: str) -> str:
    dest = dest.strip()
    if dest.startswith("<"):
        end = dest.find(">")
        if end > 0:  # `< https://x.org>`: spaces inside the brackets are no part of it
            return dest[1:end].strip()
    m = _TITLE.search(dest)
    if m is not None:
        dest = dest[:m.start()]
    return dest.strip()


def _escape_byte(text: str, i: int) -> int | None:
    """The byte of the `%XY` escape at `text[i]`, or None when there is none."""
    pair = text[i + 1:i + 3]
    if text[i:i + 1] != "%" or len(pair) != 2 or not (pair[0] in _HEX and pair[1] in _HEX):
        return None
    return int(pair, 16)


def decode_uri(text: str) -> str:
    """Rule 11 of docs/resolution.md: JavaScript's `decodeURI`, which Obsidian applies to
    a Markdown link's destination. `%20` and `%C3%A9` decode; escapes of the reserved
    characters `; / ? : @ & = + $ , #` stay as written (`Step%201%3A%20Go` is
    `Step 1%3A Go`); `+` is not a space. A malformed escape (`%ZZ`, a cut UTF-8
    sequence) makes `decodeURI` throw, and the destination is then kept as written."""
    if "%" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        first = _escape_byte(text, i)
        if first is None:
            return text
        if first < 0x80:
            out.append(text[i:i + 3] if chr(first) in _URI_RESERVED else chr(first))
            i += 3
            continue
        size = 2 if first >> 5 == 0b110 else 3 if first >> 4 == 0b1110 else \
            4 if first >> 3 == 0b11110 else 0
        if not size:
            return text
        raw = bytearray()
        for k in range(size):
            b = _escape_byte(text, i + 3 * k)
            if b is None:
                return text
            raw.append(b)
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError:  # overlong forms and surrogates: decodeURI throws too
            return text
        i += 3 * size
    return "".join(out)


def unescape(text: str) -> str:
    """`text` with CommonMark's backslash escapes removed (as in a destination)."""
    return _ESCAPED.sub(r"\1", text) if "\\" in text else text


def decode_escapes(text: str) -> str:
    """`text` with every URI escape decoded as `decode_uri` decodes it (reserved ASCII
    kept as written, UTF-8 sequences whole), but run by run of escapes: `decode_uri`
    keeps a whole text as written when one escape in it is malformed. For a whole link's
    text (kbase_ci.vault.indexhints): the parser decodes the destination alone, so a
    malformed escape in the link's text or title must not keep the destination's
    decoded form out. A malformed UTF-8 sequence becomes surrogates."""
    def run(m: re.Match[str]) -> str:
        escapes = m.group(0)
        data = bytes.fromhex(escapes.replace("%", ""))
        out: list[str] = []
        i = 0
        while i < len(data):
            if data[i] < 0x80:
                c = chr(data[i])
                out.append(escapes[3 * i:3 * i + 3] if c in _URI_RESERVED else c)
                i += 1
                continue
            end = i
            while end < len(data) and data[end] >= 0x80:
                end += 1
            out.append(data[i:end].decode("utf-8", "surrogateescape"))
            i = end
        return "".join(out)

    return _PERCENT.sub(run, text) if "%" in text else text


def markdown_link(raw: str, text: str, dest: str, embed: bool, line: int, col: int) -> Link:
    """A Markdown link or image whose text and destination are already separated.

    `dest` may still carry `<...>` and a title; both are removed here.
    """
    clean = _clean_dest(dest)
    if is_external(clean):
        return Link("markdown", embed, raw, clean, "", text, line, col, external=True)
    path, sep, frag = decode_uri(unescape(clean)).partition("#")
    return Link("markdown", embed, raw, path.strip(), frag if sep else "", text, line, col)


def wikilink_spans(s: str) -> list[tuple[int, int]]:
    """`(start, end)` of every `[[...]]` / `![[...]]` in `s`, one line at most each.

    Plain `find` instead of a lazy regex: a long line of `[[[[` without `]]`
    would make `\\[\\[.*?\\]\\]` quadratic.
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        i = s.find("[[", pos)
        if i < 0:
            return spans
        j = s.find("]]", i + 2)
        if j < 0:
            return spans
        nl = s.find("\n", i + 2, j)
        if nl >= 0:
            pos = nl + 1
            continue
        # `[[a [[b]]` links to b: the innermost opener before the closer wins.
        i = s.rfind("[[", i, j)
        if s[i + 2:j].strip():
            start = i - 1 if i > 0 and s[i - 1] == "!" else i
            spans.append((start, j + 2))
        pos = j + 2


def closing_bracket(s: str, start: int) -> int:
    """Index of the `]` matching the `[` at `start`, honouring backslash escapes."""
    depth = 0
    i = start
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def link_from_raw(raw: str, line: int = 1, col: int = 1) -> Link:
    """Any single link as written: `[[..]]`, `![[..]]`, `[t](d)`, `![a](d)`, `[t](<d d>)`."""
    s = raw.strip()
    body = s[1:] if s.startswith("!") else s
    if body.startswith("[[") and body.endswith("]]"):
        return wikilink_from_raw(s, line, col)
    if body.startswith("[") and body.endswith(")"):
        close = closing_bracket(body, 0)
        if close > 0 and body[close + 1:close + 2] == "(":
            return markdown_link(s, body[1:close], body[close + 2:-1], s.startswith("!"),
                                 line, col)
    raise UsageError(f"not a link: {raw!r}")
