"""What of a note's text is prose: everything else blanked in place, so every offset
(line, column) stays where it was. Frontmatter, fenced and inline code, `%%` and HTML
comments, links and embeds (their text too), HTML tags, URLs and tags; `visible` also
blanks headings and what `mentionnoise` finds (math, drawings, code-like tables).
Concept `mentions` and note-name matches (`namematch`) are looked for in what is left.

Every scan is linear in the text (a 1 MB line is a test case): masks are `find()` walks,
not `.*?` regexes started from every opener.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from kbase_ci.parse import mentionnoise

# In quotes too; `*+` (possessive): the space after `>` and the indent of the next
# marker overlap, and backtracking through them was exponential in the quote depth.
_FENCE = re.compile(r"^(?: {0,3}> ?)*+ {0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t].*)?$", re.MULTILINE)
_COMMENT = re.compile(r"%%.*?(?:%%|\Z)|<!--.*?(?:-->|\Z)", re.DOTALL)
CODE_SPAN = re.compile(r"(`+)([^`\n](?:.*?[^`\n])??)\1(?!`)")  # `??`: `!` is a span too
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
MASKS: tuple[tuple[str, Callable[[str], Iterator[tuple[int, int]]]], ...] = (
    ("[[", lambda t: _pairs(t, "[[", "]]")),  # wikilinks and embeds, alias included
    ("](", lambda t: _links(t, "(", ")")),  # Markdown links: text and target
    ("][", lambda t: _links(t, "[", "]")),  # reference links
    ("<", _tags),  # HTML tags (also over lines) and autolinks
    ("://", _found(_URL)),  # bare URLs
    ("www.", _found(_WWW)),
    ("#", _found(_TAG_LIKE)),  # tags (and `&#123;`, `C#`, blanked the same)
)


def blank_match(m: re.Match[str]) -> str:
    """Blank a match, keeping its newlines so lines and columns stay where they were."""
    text = m.group(0)
    return " " * len(text) if "\n" not in text else re.sub(r"[^\n]", " ", text)


def blanked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """`text` with each span (in order) turned into spaces, newlines kept."""
    parts, pos = [], 0
    for a, b in spans:
        parts += [text[pos:a], " " * (b - a) if text.find("\n", a, b) < 0
                  else re.sub(r"[^\n]", " ", text[a:b])]
        pos = b
    return "".join([*parts, text[pos:]]) if parts else text


def visible(text: str) -> str:
    """`text` with frontmatter, fenced code, comments, headings and what
    `mentionnoise` finds (math, drawings, code-like tables) blanked."""
    if mentionnoise.is_drawing(text):
        return re.sub(r"[^\n]", " ", text)
    text = _unfenced(text)
    if "%%" in text or "<!--" in text:
        text = _COMMENT.sub(blank_match, text)
    text = mentionnoise.blank_noise(text)
    return _HEADING.sub("", text) if "#" in text else text


def _unfenced(text: str) -> str:
    """`text` with frontmatter and fenced code blanked."""
    if text.startswith("---"):
        m = re.match(r"---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", text, re.DOTALL)
        if m:
            text = blank_match(m) + text[m.end():]
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
        text = CODE_SPAN.sub(blank_match, text)
    if "%%" in text or "<!--" in text:
        text = _COMMENT.sub(blank_match, text)
    for trigger, spans in MASKS:
        if trigger in text:
            text = blanked(text, spans(text))
    return text
