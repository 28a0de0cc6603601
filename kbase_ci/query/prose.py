"""A note's text as a reader takes it in, for the extractive answers (`summarize`,
`concept --definition`, `auto-index`): sentences with their line, heading and block,
and fenced code blocks (which of them define a term: `query.defining`). Line-based and
model-free; the same text gives the same answer.

What is not prose is left out by its structure, not by its position: frontmatter,
comments, tables, thematic breaks (`---`), HTML tags, `{{template}}` placeholders,
embeds (`![[x.png|500]]` says nothing, not even its width), lines that are only links,
URLs or tags (with at most a short label: `See also: [[X]]`), a line all in bold (a
label), and indented or fenced code (kept apart: `code_blocks`). Links read as their
text (`[[Note|shown]]` as "shown", `[t](url)` as "t"), emphasis marks go. Sentences in
an Obsidian callout (`> [!note]`) or in a references section (`## References`, `## See
also`, `## Further reading`, ...) are marked `aside`: never a note's lead or a
definition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kbase_ci.parse.outline import split_lines
from kbase_ci.parse.prosemask import CODE_SPAN

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$")
"""Its text is group 2 with closing blanks and `#`s cut by `rstrip`: a lazy `(.*?)`
before `[ \t#]*$` backtracked over every ` #` (20k of them: 9 s)."""
_RULE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+(?:\[.\][ \t]+)?")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
_CALLOUT = re.compile(r"^\[![^\]\n]*\][-+]?[ \t]*")
# No class below can run past the next opener of its kind: from every `[[`, `[` or `(`
# of a 1 MB line a scan to the line's end would be quadratic.
_DESTINATION = r"\((?:[^()\\\n]|\\.|\([^()\n]*\))*\)"
"""A link's `(destination "title")`: escaped or one level of balanced parentheses inside
(`(https://x.org/Fraction_\\(math\\) "Fraction (math)")`); each alternative starts on
its own character, so nothing backtracks."""
_EMBED = re.compile(rf"!\[\[[^\[\]\n]*\]\]|!\[[^\[\]\n]*\]{_DESTINATION}")
_WIKI = re.compile(r"\[\[([^\[\]|#\n]*)(?:#[^\[\]|\n]*)?(?:\|([^\[\]\n]*))?\]\]")
_MDLINK = re.compile(rf"\[([^\[\]\n]*)\]{_DESTINATION}")
_URL = re.compile(r"<?(?<![\w/])(?:[A-Za-z][\w+.-]{0,31}://|www\.)[^\s<>]*>?")
"""A scheme is short: unbounded, `[\\w+.-]*` ran from every word of `a.a.a.a...`
(quadratic: 8 s for 80 KB)."""
_HTML = re.compile(r"</?[A-Za-z][^<>\n]*>")
_TEMPLATE = re.compile(r"\{\{[^{}\n]*\}\}|<%[^%\n]*%>")
_TAG = re.compile(r"(?<![\w#&])#[^\s#]*[^\W\d][^\s#]*")
_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)|==")
_BOLD_LINE = re.compile(r"^(?:\*\*|__)[^*_\n]+(?:\*\*|__)[:.]?$")
_BLOCK_ID = re.compile(r"[ \t]\^[A-Za-z0-9-]+[ \t]*$")
_COMMENT = re.compile(r"%%[^%\n]*%%|<!--[^<>\n]*-->")
_SENTENCE_END = re.compile(r"(?<=[.!?])[ \t]+(?=[\"'(\[]?[A-Z0-9])")
_LABEL_WORDS = re.compile(r"[^\W\d_][\w'-]*")
_LINK_LABELS = frozenset({
    "see", "also", "more", "info", "information", "source", "sources", "ref", "refs",
    "reference", "references", "related", "via", "from", "link", "links", "read", "watch",
    "here", "and", "or", "the", "in", "on", "at", "tags", "tag", "by", "video", "docs"})
_REFERENCES = re.compile(
    r"(?:^|\s)(?:references?|links?|external links|useful links|further reading|"
    r"(?:see|read) also|also see|sources?|bibliography|resources|learning resources|"
    r"official documentation|documentation|related(?: notes| pages| links)?|footnotes|"
    r"citations|credits|read more|recent posts|videos?)$", re.IGNORECASE)
"""A heading naming a references-like section (also as its last words: `Redis Official
Documentation`, `Data Mart Learning Resources`)."""
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
    block: int = 0
    """Its paragraph, list item or quote: blocks are numbered in document order."""
    first: bool = True
    """The first sentence of its block."""
    aside: bool = False
    """In a callout or a references-like section: never a lead or a definition."""
    figured: tuple[bool, bool] = (False, False)
    """Whether a table or code block came before it (in the note, in its section): a
    note or section that opens with one has no lead sentence."""


@dataclass(frozen=True, slots=True)
class CodeBlock:
    line: int
    """The opening fence's line."""
    language: str
    code: str
    heading: str


def plain(text: str) -> str:
    """Markdown inline syntax read as text (embeds, HTML tags, placeholders and URLs
    left out); code spans are kept as written (`<date>` is no HTML tag)."""
    if "`" not in text:
        return " ".join(_inline(text).split())
    parts, pos = [], 0
    for m in CODE_SPAN.finditer(text):
        parts += [_inline(text[pos:m.start()]), m.group(0)]
        pos = m.end()
    return " ".join("".join([*parts, _inline(text[pos:])]).split())


def _inline(text: str) -> str:
    text = _EMBED.sub("", text)
    text = _WIKI.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)
    text = _MDLINK.sub(lambda m: m.group(1), text)
    text = _COMMENT.sub("", text)
    text = _TEMPLATE.sub("", text)
    text = _HTML.sub("", text)
    text = _URL.sub("", text)
    text = _BLOCK_ID.sub("", text)
    return _EMPHASIS.sub("", text)


def code_only(line: str) -> bool:
    """A line that is one code span (`` `priority is (above, below)` ``): code, not prose."""
    m = CODE_SPAN.fullmatch(line.strip())
    return m is not None


def link_only(line: str) -> bool:
    """A line that says nothing but where to go: only links, embeds, URLs or tags, with
    at most a label (`See also: [[X]]`, `Source: https://...`, `- [Title](url)`)."""
    rest = _EMBED.sub(" ", line)
    rest, links = _WIKI.subn(" ", rest)
    rest, more = _MDLINK.subn(" ", rest)
    links += more
    rest, more = _URL.subn(" ", rest)
    links += more
    rest = _TAG.sub(" ", _TEMPLATE.sub(" ", _HTML.sub(" ", _COMMENT.sub(" ", rest))))
    words = _LABEL_WORDS.findall(rest)
    if not words:
        return True  # nothing but links, embeds, tags, markup or punctuation
    label = rest.strip().rstrip(" \t-\u2013\u2014|,")
    return links > 0 and (all(w.casefold() in _LINK_LABELS for w in words)
                          or (label.endswith(":") and len(words) <= 6))


def _frontmatter_end(lines: list[str]) -> int:
    """Index of the first line after the frontmatter (0 when there is none)."""
    if lines and lines[0].rstrip() == "---":
        for i in range(1, len(lines)):
            if lines[i].rstrip() in ("---", "..."):
                return i + 1
    return 0


def _cut(text: str) -> str:
    return text if len(text) <= MAX_SENTENCE else text[:MAX_SENTENCE - 1] + "\u2026"


def _comment_end(lines: list[str], i: int) -> int | None:
    """Where a comment block opened on line `i` (and not closed there) ends, or None."""
    line = lines[i].strip()
    for opener, closer in (("%%", "%%"), ("<!--", "-->")):
        if line.startswith(opener) and closer not in line[len(opener):]:
            for j in range(i + 1, len(lines)):
                if closer in lines[j]:
                    return j + 1
            return len(lines)
    return None


class _Reader:
    """One pass over a note's lines (state: the open paragraph and where it is)."""

    def __init__(self) -> None:
        self.sentences: list[Sentence] = []
        self.blocks: list[CodeBlock] = []
        self.headings: list[tuple[int, str, int]] = []
        self.heading = ""
        self.para: list[tuple[int, str]] = []
        self.item = False
        self.aside = False
        self.block = 0
        self.figures = (False, False)
        """A table or code block so far (in the note, in the section)."""
        self.references = 0
        """The level of the references-like heading we are under (0: none)."""

    def flush(self) -> None:
        para, self.para = self.para, []
        if not para:
            return
        joined = " ".join(t for _, t in para)
        ends, at = [], -1  # where each line of the paragraph ends in `joined`
        for _, t in para:
            at += len(t) + 1
            ends.append(at)
        row, start, first = 0, 0, True
        for m in [*_SENTENCE_END.finditer(joined), None]:
            piece = joined[start:m.start() if m else len(joined)].strip()
            while row < len(ends) - 1 and ends[row] < start:
                row += 1  # sentences go forward: so does the line (linear)
            if piece:
                self.sentences.append(Sentence(
                    para[row][0], _cut(piece), self.heading, self.item, self.block, first,
                    self.aside or self.references > 0, self.figures))
                first = False
            start = m.end() if m else len(joined)
        self.block += 1

    def figure(self) -> None:
        """A table or a code block: no prose, but what opens a note or section."""
        self.flush()
        self.figures = (True, True)

    def head(self, level: int, text: str, line: int) -> None:
        self.flush()
        self.figures = (self.figures[0], False)
        self.heading = plain(text.rstrip(" \t#"))
        self.headings.append((level, self.heading, line))
        if self.references and level <= self.references:
            self.references = 0
        if not self.references and _REFERENCES.search(self.heading):
            self.references = level


def read(text: str) -> tuple[list[Sentence], list[CodeBlock], list[tuple[int, str, int]]]:
    """(sentences, fenced code blocks, headings as (level, text, line)) in order."""
    lines = split_lines(text)
    r = _Reader()
    quoted = False  # the previous line was in a blockquote (a callout's lines follow)
    lazy = False  # ... and had text, which an unquoted line continues
    i = _frontmatter_end(lines)
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            r.figure()
            mark, start, code = fence.group(1), i, []
            i += 1
            while i < len(lines) and not (lines[i].strip().startswith(mark[0] * len(mark))
                                          and not lines[i].strip().strip(mark[0])):
                code.append(lines[i])
                i += 1
            r.blocks.append(CodeBlock(start + 1, fence.group(2).lower(), "\n".join(code),
                                      r.heading))
            i += 1
            continue
        end = _comment_end(lines, i)
        if end is not None:
            r.flush()
            i = end
            continue
        head = _HEADING.match(line)
        if head:
            r.head(len(head.group(1)), head.group(2), i + 1)
        elif r.para and not r.item and not quoted and _SETEXT.match(line):
            # A paragraph over `===` or `---` is a heading (not a paragraph and a rule)
            para, r.para = r.para, []
            r.head(1 if line.strip()[0] == "=" else 2, " ".join(t for _, t in para),
                   para[0][0])
        elif not line.strip() or _RULE.match(line):
            r.flush()
            quoted = lazy = r.aside = False  # a blank line ends a quote
        elif line.lstrip().startswith("|") or (
                not r.para and not r.item and line.startswith(("    ", "\t"))):
            # a table row, or indented code (a list's continuation is indented too)
            r.figure()
            quoted = lazy = r.aside = False
        else:
            quote = _QUOTE.match(line)
            body = line[quote.end():] if quote else line
            lazy = lazy and not _ITEM.match(body)
            written = bool(body.strip())
            if quote and not quoted:
                r.flush()
                callout = _CALLOUT.match(body)
                r.aside = callout is not None
                body = body[callout.end():] if callout else body
            elif not quote and quoted and not lazy:
                r.flush()
                r.aside = False
            quoted = quote is not None or (quoted and lazy)
            # A line after a quote's text continues it (CommonMark's lazy continuation:
            # `> [!note]` over an unquoted line is one callout)
            lazy = quoted and written
            marker = _ITEM.match(body)
            if marker:
                r.flush()
                body = body[marker.end():]
            if not r.para:
                r.item = bool(marker)
            if link_only(body) or code_only(body) or _BOLD_LINE.match(body.strip()):
                r.flush()  # no prose, and what follows is another block
            else:
                text_ = plain(body)
                if text_:
                    r.para.append((i + 1, text_))
        i += 1
    r.flush()
    return r.sentences, r.blocks, r.headings
