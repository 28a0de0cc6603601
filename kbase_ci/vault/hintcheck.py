"""Checking what a published index claims of a note against the note's own text
(kbase_ci.vault.indexhints, issues 38 and 40): whether a note may link to a renamed or
deleted note (`loose_text`, `names_in`: found in its text, never in the index), and
whether the links an index row claims are all its links that could name it
(`verified_links`). Each answer may be "parse the note" but never hides a link: the
Hypothesis property in tests/unit/vault/test_indexhints.py checks that against the
parser.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection
from typing import Any

from kbase_ci.errors import UsageError
from kbase_ci.parse.frontmatter import split
from kbase_ci.parse.linksyntax import decode_escapes, link_from_raw, unescape
from kbase_ci.parsed import Link
from kbase_ci.vault.notestore import fold

MAX_RAW = 8192
"""Longest link text a row may claim; a longer one makes the note parsed."""


def loose_text(text: str) -> str:
    """A note's text in every form a link's target may take in it: as written, CommonMark
    escapes removed, URI escapes decoded, both in either order, folded (`fold`): the
    parser's target key of any link of the note (or its last segment) is a substring."""
    forms = [text]
    if "%" in text or "\\" in text:
        # Only lines with an escape change: a link's target never spans lines.
        odd = "\n".join(line for line in text.split("\n") if "%" in line or "\\" in line)
        plain = unescape(odd)
        forms.extend(dict.fromkeys((plain, decode_escapes(plain), decode_escapes(odd),
                                    unescape(decode_escapes(odd)))))
    # Folding works character by character: NUL, between forms, joins no name.
    return fold("\0".join(forms))


_BEFORE = frozenset("[/(<>:\0") | frozenset(" \t\n\r\f\v")
"""What a link target's last segment follows: `[[`, `/`, `(`, `<`, `:` of a reference
definition, white space (a destination after spaces or on the next line), `>` (the
next line of a destination in a block quote), a NUL; or the start of the text."""
_AFTER = frozenset("]#|.)>\0") | frozenset(" \t\n\r\f\v")
"""What it is followed by: `]]`, `#`, `|`, `.md`, `)`, `>`, white space (a title); or
the end of the text."""


def names_in(keys: Collection[str]) -> Callable[[str], bool]:
    """Whether a folded text names one of `keys` (folded target keys) where a link
    target's last segment could end: `[[Old#h]]` and `[x](dir/Old.md)` do, `Older` and
    `pg_dump` do not name `old` and `pg`. (A literal search, then the two characters
    around each hit: a regular expression with a look-behind tries every position.)"""
    wanted = list(keys)
    if "" in wanted:  # a name of backslashes only, folded away: anything may name it
        return lambda text: True

    def named(text: str) -> bool:
        for k in wanted:
            i = text.find(k)
            while i >= 0:
                end = i + len(k)
                if (i == 0 or text[i - 1] in _BEFORE) and \
                        (end == len(text) or text[end] in _AFTER):
                    return True
                i = text.find(k, i + 1)
        return False

    return named


def yaml_rewrites(text: str) -> bool:
    """Whether the note's frontmatter may hold a link whose text is not written as such:
    YAML's escapes (`"[[\\x41]]"`), `''` in single quotes, a link folded over lines, a
    `!!binary` value. Such a note is a candidate for every name and always parsed."""
    yaml = split(text[1:] if text.startswith("\ufeff") else text)[0]
    if yaml is None:
        return False
    # Escapes are read in double quotes only (and can make a `[[` or join two lines);
    # `''` can change a link's text only inside it; YAML folds lines with a space, so a
    # link is changed by folding only where it is left open at a line's end.
    if ("\\" in yaml and '"' in yaml) or "!binary" in yaml:
        return True
    for line in yaml.splitlines():
        at = line.find("[[")
        if at >= 0 and (line.rfind("[[") > line.rfind("]]") or "''" in line[at:]):
            return True
    return False


def verified_links(text: str, row: Any, keys: Collection[str]) -> tuple[Link, ...] | None:
    """The links `row` claims for `text` when each is written at its place and none of
    `keys` appears in the text outside them where a link could be; else None (also when
    the frontmatter may write a link otherwise: `yaml_rewrites`)."""
    if not isinstance(row, list) or yaml_rewrites(text):
        return None
    named = names_in(keys)
    starts = [0]
    starts.extend(m.end() for m in re.finditer("\n", text))
    spans: list[tuple[int, int]] = []
    links: list[Link] = []
    for item in row:
        if not isinstance(item, list) or len(item) not in (3, 4):
            return None
        line, col, raw = item[0], item[1], item[2]
        key = item[3] if len(item) == 4 else None
        if type(line) is not int or type(col) is not int or not isinstance(raw, str) or \
                not 1 <= line <= len(starts) or col < 1 or not raw or len(raw) > MAX_RAW or \
                (key is not None and not isinstance(key, str)):
            return None
        at = starts[line - 1] + col - 1
        end = starts[line] if line < len(starts) else len(text) + 1
        if at >= end or not text.startswith(raw, at):
            return None
        try:
            link = link_from_raw(raw, line, col)
        except UsageError:
            return None
        if key is not None:
            if link.style != "wiki":
                return None
            link = link._replace(frontmatter_key=key)
        # A name inside a claimed link must be that link's target: a claim that swallows
        # a link to it into a longer text (`[[A]] [[Old]]`) would hide it.
        if keys and named(loose_text(raw)) and _name(link.target) not in keys:
            return None
        spans.append((at, at + len(raw)))
        links.append(link)
    # The text outside the claimed links (each replaced by NUL, its line breaks kept);
    # a name there is a link the row left out, unless its line can hold no link target:
    # no bracket on it, and the line before does not end a destination's opening
    # (`[t](` or `[ref]:`, whose target may follow on the next line).
    rest, pos = [], 0
    for a, b in sorted(spans):
        rest.append(text[pos:a] if a > pos else "")
        rest.append("\0" + "\n" * text.count("\n", max(a, pos), b) if b > pos else "")
        pos = max(pos, b)
    rest.append(text[pos:])
    lines = "".join(rest).split("\n")
    open_ends = ("(", "]:")
    capable = [line for i, line in enumerate(lines) if "[" in line or "]" in line
               or (i and lines[i - 1].rstrip().endswith(open_ends))]
    folded = loose_text("\n".join(capable))
    if named(folded):
        return None
    return tuple(links)


def _name(target: str) -> str:
    """A link target's name key (`checks.breakage.name_key`: the last segment, lower-case,
    without `.md`), folded as `keys` are."""
    seg = target[target.rfind("/") + 1:]
    seg = seg.lower() if seg.isascii() else unicodedata.normalize("NFC", seg).lower()
    return fold(seg[:-3] if seg.endswith(".md") else seg)
