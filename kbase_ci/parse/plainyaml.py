"""Frontmatter in the plainest YAML (`key: word`, `key: [a, b]`, `key:`), read without
ruamel.

Most frontmatter is a few `key: value` lines. Loading them through ruamel cost ~0.6 ms
a note and ~60 ms to import it (data-engineering-wiki's 176 frontmatter blocks: a fifth
of its parse). `load_plain` reads only a small subset whose meaning in YAML 1.2 is beyond
doubt and answers None for anything else, which ruamel then loads as before:

- every line empty or `KEY:` at column 0, optionally followed by spaces and a value;
  KEY is ASCII letters, digits, `_` and `-`, starting with a letter or `_`; no key twice;
- a value is a word: an ASCII letter, then letters, digits, spaces and `_./()-`, where
  `true`/`True`/`TRUE` and `false`/... are booleans, `null`/`Null`/`NULL` is null, and
  other words YAML 1.1 read as booleans (`yes`, `off`, `y`, ...) are left to ruamel;
  or a one-line flow list of such words (`[]`, `[a, b c]`); or nothing (null).

No quotes, comments, tabs, numbers, dates, nesting or non-ASCII text: each of those has
rules (escapes, resolution, timestamps) a copy would have to get exactly right.
`tests/unit/parse/test_plainyaml.py` compares it with ruamel on every case it answers.
"""

from __future__ import annotations

import re
from typing import Any

# Each pattern is one character class run after a fixed start, so a match never tries a
# second way to split a run of spaces: a line of 100k spaces that fails costs linear time
# (an earlier `word *` took 56 s on one such note: the word may hold spaces too).
_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9 _./()-]*")
_ITEMS = re.compile(r"\[[A-Za-z0-9 _./(),-]*\]")
_CONSTANTS: dict[str, Any] = {"true": True, "True": True, "TRUE": True, "false": False,
                              "False": False, "FALSE": False, "null": None, "Null": None,
                              "NULL": None}
# Booleans of YAML 1.1 (and case variants of 1.2's words): a reader may differ on them.
_DOUBTFUL = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


def _scalar(word: str) -> tuple[bool, Any]:
    """(known, value) of a plain word (spaces at its end dropped, as YAML does)."""
    word = word.rstrip(" ")
    if word in _CONSTANTS:
        return True, _CONSTANTS[word]
    return word.lower() not in _DOUBTFUL, word


def load_plain(raw: str) -> dict[str, Any] | None:
    """The mapping `raw` loads to, when it is within the subset; None otherwise."""
    data: dict[str, Any] = {}
    for line in raw.split("\n"):
        if not line:
            continue
        m = _LINE.fullmatch(line)
        if m is None:
            return None
        key, text = m.groups()
        if key in data or key.lower() in _DOUBTFUL:
            return None  # a duplicate key (ruamel reports it: KB302), or a doubtful one
        text = (text or "").rstrip(" ")
        if not text:
            known, value = True, None
        elif _WORD.fullmatch(text):
            known, value = _scalar(text)
        elif _ITEMS.fullmatch(text):
            value = []
            known = True
            inner = text[1:-1].strip(" ")
            for item in (part.strip(" ") for part in inner.split(",")) if inner else ():
                if _WORD.fullmatch(item) is None:
                    return None
                ok, got = _scalar(item)
                known = known and ok
                value.append(got)
        else:
            return None
        if not known:
            return None
        data[key] = value
    return data or None
