"""Concept mentions in a note's text: the terms `kbase gaps` counts across notes.

Two kinds of term are taken, both cheap to find line by line without the parser:
- `code`: an identifier in backticks (`json.loads`, `max_connections`, `Vec::new`);
- `name`: a capitalised multi-word name ("Change Data Capture", "Apache Kafka",
  "Bureau of Labor Statistics") or a single CamelCase word ("PostgreSQL", "GitHub").
Frequent lower-case noun phrases are not taken: without a tagger they are mostly noise.

Skipped: frontmatter, fenced code blocks, HTML and `%%` comments, math, Excalidraw
drawings and code-like tables (`kbase_ci.parse.mentionnoise`), heading lines (a
heading is structure, and a concept some heading names counts as documented), link
text and targets (wiki and Markdown), URLs, tags and other inline code. Which
candidates are terms is `kbase_ci.parse.termrules`: literals and one-word code values
go, a name at the start of a sentence loses a leading function word ("The", "Using",
...), and one that still starts a sentence is marked `initial`.

Every scan is linear in the text (a 1 MB line is a test case): masks are `find()` walks,
not `.*?` regexes started from every opener, and sentence starts look back a bounded way.

The result depends on the text alone (not the path), so it can be cached by blob id.
Bump VERSION whenever the output for some text changes: it keys caches and concepts.json.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from typing import Literal

from kbase_ci.parse import termrules
from kbase_ci.parse.prosemask import CODE_SPAN, MASKS, blank_match, blanked, visible

VERSION = 4
TermKind = Literal["code", "name", "initial"]
"""`initial`: a name this note writes only at the start of sentences (table cells, list
items), where a capital proves nothing; it counts only where another note gives evidence."""

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:(?:\.|::|->|-)[A-Za-z_]\w*)*(?:\(\))?")

# A name starts only where a word does, not after `x-` or `x'` (a 1 MB `Aa-Aa-...` or
# `Aa'Aa'...` line was quadratic: every such place started a scan to the line's end).
_WORD = r"[A-Z][A-Za-z0-9'’]*(?:-[A-Za-z0-9]+)*"
_NAME = re.compile(rf"\b(?<!\w[-'’]){_WORD}(?:[ \t]+(?:(?:of|and|for|the|de|du|van|von|&)"
                   rf"[ \t]+)*{_WORD})+\b")
_CAMEL_HUMP = re.compile(r"[a-z][A-Z]")
_CAMEL = re.compile(r"[A-Za-z]?[a-z]+[A-Z][A-Za-z0-9]*")
_GLUED = frozenset(".@/-_")  # "os.Path", "a/B", "x-Y": part of a bigger token
MAX_TERM = 80


@dataclass(frozen=True, slots=True)
class Mention:
    """The first mention of one term in a note."""

    key: str
    """Normalised term (NFC, casefolded, single spaces): mentions with one key are one
    concept, and a note title or alias with this key documents it."""
    name: str
    """The term as first written."""
    kind: TermKind
    line: int
    col: int
    """1-based, code points."""


_NOT_PLURAL = ("ss", "us", "is")


def term_key(text: str) -> str:
    """NFC, casefolded, single spaces; the last word of a multi-word name loses a plural
    `s` ("Data Engineers" and "Data Engineer" are one concept, and a note titled either
    documents it)."""
    words = unicodedata.normalize("NFC", text).casefold().split()
    if len(words) > 1 and words[-1].endswith("s") and len(words[-1]) > 3 \
            and not words[-1].endswith(_NOT_PLURAL):
        words[-1] = words[-1][:-1]
    return " ".join(words)


# Searched, not matched from the start behind a lazy `(.*?)\s*`: that backtracked over
# every blank (`a`, 40k spaces, `b`: 19 s), and an alias is a PR's text.
_PAREN = re.compile(r"[(（\[]([^()（）\[\]]+)[)）\]]")
_WIDE = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\u3040-\u30ff]+")


def name_keys(name: str) -> set[str]:
    """The keys a title or alias documents: its own, and those of its parts when it
    names one thing twice: `Trap Interrupt (陷入)` documents "Trap Interrupt" and "陷入",
    and so does `Trap Interrupt 陷入` (a run of CJK script beside the rest)."""
    keys = {term_key(name)}
    whole = name.strip()
    m = _PAREN.search(whole)
    parts = [whole[:m.start()].rstrip(), m.group(1), whole[m.end():].lstrip()] if m else []
    if not m and (wide := _WIDE.findall(name)):
        parts = [*wide, _WIDE.sub(" ", name)]
    keys.update(term_key(p) for p in parts if p.strip())
    return {k for k in keys if k}



_HEADING_TEXT = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+)$", re.MULTILINE)


def _heading_text(line: str) -> str:
    """A heading's text without its closing `#`s: string operations, not a lazy regex
    with an optional closing sequence (quadratic in a long run of spaces)."""
    body = line.rstrip(" \t")
    bare = body.rstrip("#")
    if bare != body and bare[-1:] in (" ", "\t") and bare.rstrip(" \t"):
        return bare.rstrip(" \t")
    return body or line[:1]


def heading_keys(text: str) -> set[str]:
    """Keys of the ATX headings of `text`, found by a line scan: fast on a whole vault, at
    the price of also taking `# comment` lines of fenced code (a PR report's reading of
    which concepts some heading documents)."""
    if "#" not in text:
        return set()
    return {term_key(_heading_text(h)) for h in _HEADING_TEXT.findall(text)}


def _glued(text: str, start: int) -> bool:
    return start > 0 and text[start - 1] in _GLUED


def extract(text: str) -> list[Mention]:
    """The first mention of every term in `text`, in order of position."""
    text = visible(text)
    found: list[tuple[int, str, str, TermKind]] = []  # (offset, key, name, kind)
    if "`" in text:
        for m in CODE_SPAN.finditer(text):
            body = m.group(2).strip().removesuffix("()")
            if 3 <= len(body) <= MAX_TERM and _IDENTIFIER.fullmatch(body) \
                    and termrules.code_term(body):
                found.append((m.start(2) + m.group(2).index(body[0]), term_key(body), body,
                              "code"))
        text = CODE_SPAN.sub(blank_match, text)
    for trigger, spans in MASKS:
        if trigger in text:
            text = blanked(text, spans(text))
    starts = [0, *(m.end() for m in re.finditer("\n", text))]
    for m in _NAME.finditer(text):
        if _glued(text, m.start()):
            continue
        line_start = starts[bisect_right(starts, m.start()) - 1]
        for at, words, initial in termrules.name_spans(text, line_start, m.start(), m.end(),
                                                       m.group(0).split()):
            if m.end() - at <= MAX_TERM:
                name = " ".join(words)
                found.append((at, term_key(name), name, "initial" if initial else "name"))
    # Before CamelCase words, whose shape is their evidence.
    if any(kind == "name" for *_, kind in found) and termrules.capitalises_nouns(text):
        found = [(o, k, n, "initial" if kind == "name" else kind) for o, k, n, kind in found]
    seen = -1
    for hump in _CAMEL_HUMP.finditer(text):  # rare: find humps, then their words
        if hump.start() < seen:
            continue
        start = hump.start()
        while start > 0 and text[start - 1].isalnum():
            start -= 1
        word = _CAMEL.match(text, start)
        seen = word.end() if word else hump.end()
        if (word and not _glued(text, start) and len(word.group(0)) <= MAX_TERM
                and not (seen < len(text) and (text[seen].isalnum() or text[seen] in "@/"))
                and termrules.camel_term(text, start, seen)):
            found.append((start, term_key(word.group(0)), word.group(0), "name"))
        # Every later hump of this run of letters walks back to the same start and finds
        # the same word: skip them (walking back once per hump was quadratic).
        while seen < len(text) and text[seen].isalnum():
            seen += 1
    first: dict[str, tuple[int, str, TermKind]] = {}
    evident = {key for _, key, _, kind in found if kind != "initial"}
    for offset, key, name, kind in sorted(found):
        first.setdefault(key, (offset, name, "name" if key in evident and kind == "initial"
                                              else kind))
    if not first:
        return []
    out = []
    for key, (offset, name, kind) in first.items():
        row = bisect_right(starts, offset) - 1
        out.append(Mention(key, name, kind, row + 1, offset - starts[row] + 1))
    return out
