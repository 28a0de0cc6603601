"""Concept mentions in a note's text: the terms `kbase gaps` counts across notes.

Two kinds of term are taken, both cheap to find line by line without the parser:
- `code`: an identifier in backticks (`json.loads`, `max_connections`, `Vec::new`);
- `name`: a capitalised multi-word name ("Change Data Capture", "Apache Kafka",
  "Bureau of Labor Statistics") or a single CamelCase word ("PostgreSQL", "GitHub").
Frequent lower-case noun phrases are not taken: without a tagger they are mostly noise.

Skipped: frontmatter, fenced code blocks, HTML and `%%` comments, heading lines (a
heading is structure, and a concept some heading names counts as documented), link
text and targets (wiki and Markdown), URLs, tags and other inline code. Which
candidates are terms is `kbase_ci.parse.termrules`: literals and one-word code values
go, a name at the start of a sentence loses a leading function word ("The", "Using",
...), and one that still starts a sentence is marked `initial`.

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

VERSION = 2
TermKind = Literal["code", "name", "initial"]
"""`initial`: a name this note writes only at the start of sentences (table cells, list
items), where a capital proves nothing; it counts only where another note gives evidence."""

_FENCE = re.compile(r"^(?: {0,3}> ?)* {0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)  # in quotes too
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t].*)?$", re.MULTILINE)
_COMMENT = re.compile(r"%%.*?(?:%%|\Z)|<!--.*?(?:-->|\Z)", re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)([^`\n](?:.*?[^`\n])??)\1(?!`)")  # `??`: `!` is a span too
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:(?:\.|::|->|-)[A-Za-z_]\w*)*(?:\(\))?")
# Blanked before names are looked for, each only when its first character occurs (one
# pattern per kind with a literal start is several times faster than one alternation).
_MASKS = (
    ("[[", re.compile(r"\[\[.*?\]\]")),  # wikilinks and embeds, alias included
    ("](", re.compile(r"\[[^\]\n]*\]\([^)\n]*\)")),  # Markdown links: text and target
    ("][", re.compile(r"\[[^\]\n]*\]\[[^\]\n]*\]")),  # reference links
    ("<", re.compile(r"<[^>\n]*>|<[A-Za-z][^<>]*>")),  # HTML tags (also over lines), autolinks
    ("://", re.compile(r"[A-Za-z]+://[^\s)>\]]+")),  # bare URLs
    ("www.", re.compile(r"www\.[^\s)>\]]+")),
    ("#", re.compile(r"#[^\s#]+")),  # tags (and `&#123;`, `C#`, blanked the same)
)
_WORD = r"[A-Z][A-Za-z0-9'’]*(?:-[A-Za-z0-9]+)*"
_NAME = re.compile(rf"\b{_WORD}(?:[ \t]+(?:(?:of|and|for|the|de|du|van|von|&)[ \t]+)*"
                   rf"{_WORD})+\b")
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


def _spaces(m: re.Match[str]) -> str:
    """Blank a match, keeping its newlines so lines and columns stay where they were."""
    text = m.group(0)
    return " " * len(text) if "\n" not in text else re.sub(r"[^\n]", " ", text)


def _visible(text: str) -> str:
    """`text` with frontmatter, fenced code, comments and headings blanked."""
    if text.startswith("---"):
        m = re.match(r"---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", text, re.DOTALL)
        if m:
            text = _spaces(m) + text[m.end():]
    if "```" in text or "~~~" in text:
        spans: list[tuple[int, int]] = []
        opened: re.Match[str] | None = None
        for m in _FENCE.finditer(text):
            fence = m.group(1)
            if opened is None:
                if not (fence[0] == "`" and "`" in m.group(2)):
                    opened = m
            elif (fence[0] == opened.group(1)[0] and len(fence) >= len(opened.group(1))
                  and not m.group(2).strip()):
                spans.append((opened.start(), m.end()))
                opened = None
        if opened is not None:  # an unclosed fence runs to the end of the note
            spans.append((opened.start(), len(text)))
        for start, end in reversed(spans):
            text = text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]
    if "%%" in text or "<!--" in text:
        text = _COMMENT.sub(_spaces, text)
    return _HEADING.sub("", text) if "#" in text else text


_HEADING_TEXT = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)


def heading_keys(text: str) -> set[str]:
    """Keys of the ATX headings of `text`, found by a line scan: fast on a whole vault, at
    the price of also taking `# comment` lines of fenced code (a PR report's reading of
    which concepts some heading documents)."""
    return {term_key(h) for h in _HEADING_TEXT.findall(text)} if "#" in text else set()


def _glued(text: str, start: int) -> bool:
    return start > 0 and text[start - 1] in _GLUED


def extract(text: str) -> list[Mention]:
    """The first mention of every term in `text`, in order of position."""
    text = _visible(text)
    found: list[tuple[int, str, str, TermKind]] = []  # (offset, key, name, kind)
    if "`" in text:
        for m in _CODE_SPAN.finditer(text):
            body = m.group(2).strip().removesuffix("()")
            if 3 <= len(body) <= MAX_TERM and _IDENTIFIER.fullmatch(body) \
                    and termrules.code_term(body):
                found.append((m.start(2) + m.group(2).index(body[0]), term_key(body), body,
                              "code"))
        text = _CODE_SPAN.sub(_spaces, text)
    for trigger, pattern in _MASKS:
        if trigger in text:
            text = pattern.sub(_spaces, text)
    for m in _NAME.finditer(text):
        if _glued(text, m.start()):
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
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
    first: dict[str, tuple[int, str, TermKind]] = {}
    evident = {key for _, key, _, kind in found if kind != "initial"}
    for offset, key, name, kind in sorted(found):
        first.setdefault(key, (offset, name, "name" if key in evident and kind == "initial"
                                              else kind))
    if not first:
        return []
    starts = [0, *(m.end() for m in re.finditer("\n", text))]
    out = []
    for key, (offset, name, kind) in first.items():
        row = bisect_right(starts, offset) - 1
        out.append(Mention(key, name, kind, row + 1, offset - starts[row] + 1))
    return out
