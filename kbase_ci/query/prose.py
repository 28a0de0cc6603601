"""A note's text as a reader takes it in, for the extractive answers (`summarize`,
`concept --definition`): sentences with their line and heading, defining sentences, and
fenced code blocks. Line-based and model-free; the same text gives the same answer.

Frontmatter, comments and tables are not prose; fenced code is kept apart
(`code_blocks`); headings give each sentence its section. Links read as their text
(`[[Note|shown]]` as "shown", `[t](url)` as "t"), emphasis marks go.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbase_ci.parse.outline import split_lines

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$")
"""Its text is group 2 with closing blanks and `#`s cut by `rstrip`: a lazy `(.*?)`
before `[ \t#]*$` backtracked over every ` #` (20k of them: 9 s)."""
_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(?:\[.\][ \t]+)?")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+(?:\[![^\]]*\][-+]?[ \t]*)?")
# No class below can run past the next opener of its kind: from every `[[`, `[` or `(`
# of a 1 MB line a scan to the line's end would be quadratic.
_WIKI = re.compile(r"!?\[\[([^\[\]|#\n]*)(?:#[^\[\]|\n]*)?(?:\|([^\[\]\n]*))?\]\]")
_MDLINK = re.compile(r"!?\[([^\[\]\n]*)\]\([^()\n]*\)")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)|==")
_BLOCK_ID = re.compile(r"[ \t]\^[A-Za-z0-9-]+[ \t]*$")
_COMMENT = re.compile(r"%%[^%\n]*%%|<!--[^<>\n]*-->")
_SENTENCE_END = re.compile(r"(?<=[.!?])[ \t]+(?=[\"'(\[]?[A-Z0-9])")
MAX_SENTENCE = 400
"""Longer sentences are cut with an ellipsis (a table-like run-on line)."""


@dataclass(frozen=True, slots=True)
class Sentence:
    line: int
    """1-based line where it starts."""
    text: str
    heading: str
    """The heading of its section ("" before the first heading)."""
    item: bool
    """A list item's text (a fact list reads `X: what it is`)."""


@dataclass(frozen=True, slots=True)
class CodeBlock:
    line: int
    """The opening fence's line."""
    language: str
    code: str
    heading: str


def plain(text: str) -> str:
    """Markdown inline syntax read as text."""
    text = _WIKI.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)
    text = _MDLINK.sub(lambda m: m.group(1), text)
    text = _COMMENT.sub("", text)
    text = _BLOCK_ID.sub("", text)
    return _EMPHASIS.sub("", text).strip()


def _frontmatter_end(lines: list[str]) -> int:
    """Index of the first line after the frontmatter (0 when there is none)."""
    if lines and lines[0].rstrip() == "---":
        for i in range(1, len(lines)):
            if lines[i].rstrip() in ("---", "..."):
                return i + 1
    return 0


def _cut(text: str) -> str:
    return text if len(text) <= MAX_SENTENCE else text[:MAX_SENTENCE - 1] + "\u2026"


def read(text: str) -> tuple[list[Sentence], list[CodeBlock], list[tuple[int, str, int]]]:
    """(sentences, fenced code blocks, headings as (level, text, line)) in order."""
    lines = split_lines(text)
    sentences: list[Sentence] = []
    blocks: list[CodeBlock] = []
    headings: list[tuple[int, str, int]] = []
    heading = ""
    para: list[tuple[int, str]] = []
    item = False

    def flush() -> None:
        nonlocal para
        if para:
            joined = " ".join(t for _, t in para)
            ends, at = [], -1  # where each line of the paragraph ends in `joined`
            for _, t in para:
                at += len(t) + 1
                ends.append(at)
            row, start = 0, 0
            for m in [*_SENTENCE_END.finditer(joined), None]:
                piece = joined[start:m.start() if m else len(joined)]
                while row < len(ends) - 1 and ends[row] < start:
                    row += 1  # sentences go forward: so does the line (linear)
                if piece.strip():
                    sentences.append(Sentence(para[row][0], _cut(piece.strip()), heading,
                                              item))
                start = m.end() if m else len(joined)
        para = []

    i = _frontmatter_end(lines)
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush()
            mark, start, code = fence.group(1), i, []
            i += 1
            while i < len(lines) and not (lines[i].strip().startswith(mark[0] * len(mark))
                                          and not lines[i].strip().strip(mark[0])):
                code.append(lines[i])
                i += 1
            blocks.append(CodeBlock(start + 1, fence.group(2).lower(), "\n".join(code), heading))
            i += 1
            continue
        head = _HEADING.match(line)
        if head:
            flush()
            heading = plain(head.group(2).rstrip(" \t#"))
            headings.append((len(head.group(1)), heading, i + 1))
        elif not line.strip() or line.lstrip().startswith("|"):
            flush()
        else:
            body = _QUOTE.sub("", line)
            marker = _ITEM.match(body)
            if marker:
                flush()
                body = body[marker.end():]
            if not para:
                item = bool(marker)
            text_ = plain(body)
            if text_:
                para.append((i + 1, text_))
        i += 1
    flush()
    return sentences, blocks, headings


_COPULA = re.compile(
    r"^(?P<term>[^.!?:;,]{1,80}?)\s+(?:is|are|was|were|means|refers to|denotes|stands for"
    r"|describes|defines)\s+\S", re.IGNORECASE)
_COLON = re.compile(r"^(?P<term>[^.!?:;]{1,60}?)\s*(?::|\s[-\u2013\u2014]\s)\s*\S")
_OPENERS = frozenset({"it", "this", "that", "there", "these", "those", "they", "he", "she",
                      "we", "you", "i", "which", "what", "here", "each", "all", "some"})


def defined_term(s: Sentence) -> str | None:
    """The term a defining sentence defines ("X is ...", "X means ...", an item or a
    short line `X: ...` / `X - ...`), else None."""
    m = _COPULA.match(s.text)
    if m is None and (s.item or len(s.text) < 200):
        m = _COLON.match(s.text)
        if m is not None and len(m.group("term").split()) > 6:
            m = None
    if m is None:
        return None
    term = m.group("term").strip().strip("\"'`")
    first = term.split()[0].casefold() if term.split() else ""
    for article in ("the ", "a ", "an "):
        if term.casefold().startswith(article):
            term = term[len(article):]
    if not term or first in _OPENERS or len(term.split()) > 8:
        return None
    return term
