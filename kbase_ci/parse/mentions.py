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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from kbase_ci.parse import mentionnoise, termrules

VERSION = 4
TermKind = Literal["code", "name", "initial"]
"""`initial`: a name this note writes only at the start of sentences (table cells, list
items), where a capital proves nothing; it counts only where another note gives evidence."""

# In quotes too; `*+` (possessive): the space after `>` and the indent of the next
# marker overlap, and backtracking through them was exponential in the quote depth.
_FENCE = re.compile(r"^(?: {0,3}> ?)*+ {0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t].*)?$", re.MULTILINE)
_COMMENT = re.compile(r"%%.*?(?:%%|\Z)|<!--.*?(?:-->|\Z)", re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)([^`\n](?:.*?[^`\n])??)\1(?!`)")  # `??`: `!` is a span too
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:(?:\.|::|->|-)[A-Za-z_]\w*)*(?:\(\))?")
_URL = re.compile(r"(?<![A-Za-z])[A-Za-z]+://[^\s)>\]]+")
_WWW = re.compile(r"www\.[^\s)>\]]+")
_TAG_LIKE = re.compile(r"#[^\s#]+")


def _line_end(text: str, i: int, known: int) -> int:
    """End of the line holding `i` (`known`: the last one found, reused while it holds:
    searching again from every opener of a 1 MB line would be quadratic)."""
    if known >= i:
        return known
    nl = text.find("\n", i)
    return len(text) if nl < 0 else nl


def _pairs(text: str, opener: str, closer: str) -> Iterator[tuple[int, int]]:
    """Spans `opener ... closer` on one line, nearest closer first: what the regex
    `opener.*?closer` finds, in linear time (after an opener with no closer on its line,
    no later opener of that line can have one: skip to the line's end)."""
    pos, end = 0, -1
    while (i := text.find(opener, pos)) >= 0:
        end = _line_end(text, i, end)
        j = text.find(closer, i + len(opener), end)
        if j < 0:
            pos = end
            continue
        yield i, j + len(closer)
        pos = j + len(closer)


def _links(text: str, middle: str, closer: str) -> Iterator[tuple[int, int]]:
    """Spans `[text](target)` (middle `(`) or `[text][label]` (middle `[`) on one line:
    what `\\[[^\\]\\n]*\\]\\([^)\\n]*\\)` finds, in linear time (every `[` before the first `]`
    fails the way the first one does; after a `](` with no `)` on its line, so does every
    later one of that line)."""
    pos, end, dead = 0, -1, -1
    while (i := text.find("[", pos)) >= 0:
        end = _line_end(text, i, end)
        j = text.find("]", i + 1, end)
        if j < 0:
            pos = end
            continue
        if text.startswith(middle, j + 1) and dead != end:
            k = text.find(closer, j + 2, end)
            if k >= 0:
                yield i, k + 1
                pos = k + 1
                continue
            dead = end
        pos = j + 1


def _tags(text: str) -> Iterator[tuple[int, int]]:
    """Spans `<...>` on one line (tags, autolinks) and `<Tag ...>` over lines (a tag whose
    attributes are wrapped): what `<[^>\n]*>|<[A-Za-z][^<>]*>` finds, in linear time (the
    next `>` is found once and reused while it lies ahead; a `<` before it ends the
    search from this opener there)."""
    pos, end, gt = 0, -1, -1
    while (i := text.find("<", pos)) >= 0:
        if gt <= i:
            gt = text.find(">", i + 1)
            if gt < 0:
                return
        end = _line_end(text, i, end)
        if gt < end or (text[i + 1:i + 2] in _ASCII_LETTERS
                        and text.find("<", i + 1, gt) < 0):
            yield i, gt + 1
            pos = gt + 1
        else:
            pos = i + 1


_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _found(pattern: re.Pattern[str]) -> Callable[[str], Iterator[tuple[int, int]]]:
    return lambda text: (m.span() for m in pattern.finditer(text))


# Blanked before names are looked for, each only when its first character occurs (one
# pass per kind with a literal start is several times faster than one alternation). Each
# is linear in the text: `.*?`-style regexes from every `[[` or `<` of a 1 MB line were
# quadratic (minutes).
_MASKS: tuple[tuple[str, Callable[[str], Iterator[tuple[int, int]]]], ...] = (
    ("[[", lambda t: _pairs(t, "[[", "]]")),  # wikilinks and embeds, alias included
    ("](", lambda t: _links(t, "(", ")")),  # Markdown links: text and target
    ("][", lambda t: _links(t, "[", "]")),  # reference links
    ("<", _tags),  # HTML tags (also over lines) and autolinks
    ("://", _found(_URL)),  # bare URLs
    ("www.", _found(_WWW)),
    ("#", _found(_TAG_LIKE)),  # tags (and `&#123;`, `C#`, blanked the same)
)
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


def _spaces(m: re.Match[str]) -> str:
    """Blank a match, keeping its newlines so lines and columns stay where they were."""
    text = m.group(0)
    return " " * len(text) if "\n" not in text else re.sub(r"[^\n]", " ", text)


def _blanked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """`text` with each span (in order) turned into spaces, newlines kept."""
    parts, pos = [], 0
    for a, b in spans:
        parts += [text[pos:a], " " * (b - a) if text.find("\n", a, b) < 0
                  else re.sub(r"[^\n]", " ", text[a:b])]
        pos = b
    return "".join([*parts, text[pos:]]) if parts else text


def _visible(text: str) -> str:
    """`text` with frontmatter, fenced code, comments, headings and what
    `mentionnoise` finds (math, drawings, code-like tables) blanked."""
    if mentionnoise.is_drawing(text):
        return re.sub(r"[^\n]", " ", text)
    text = _unfenced(text)
    if "%%" in text or "<!--" in text:
        text = _COMMENT.sub(_spaces, text)
    text = mentionnoise.blank_noise(text)
    return _HEADING.sub("", text) if "#" in text else text


def _unfenced(text: str) -> str:
    """`text` with frontmatter and fenced code blanked."""
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
        parts, pos = [], 0  # one pass: a copy of the text per fence was quadratic
        for start, end in spans:
            parts += [text[pos:start], re.sub(r"[^\n]", " ", text[start:end])]
            pos = end
        text = "".join([*parts, text[pos:]])
    return text


def prose(text: str) -> str:
    """`text` with all but its prose (headings included) blanked, every offset kept:
    frontmatter, fenced and inline code, comments, links and embeds (their text too),
    HTML tags, URLs and tags. Where `kbase_ci.parse.namematch` looks for note names.
    Code spans go before comments: `%%` or `<!--` in backticks opens no comment."""
    text = _unfenced(text)
    if "`" in text:
        text = _CODE_SPAN.sub(_spaces, text)
    if "%%" in text or "<!--" in text:
        text = _COMMENT.sub(_spaces, text)
    for trigger, spans in _MASKS:
        if trigger in text:
            text = _blanked(text, spans(text))
    return text


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
    for trigger, spans in _MASKS:
        if trigger in text:
            text = _blanked(text, spans(text))
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
