"""Links and tags in one run of inline text (a paragraph, heading or table cell).

tree-sitter-markdown has no wikilink or tag nodes, so we blank out what can
never hold them (code spans, autolinks, raw HTML, math, link destinations,
backslash escapes, `%%comments%%`) and regex the rest. The inline grammar is run
only when the text contains a character that could start one of those; most
lines have none and are regexed directly.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node, Parser, Point, Query, QueryCursor, Range

from kbase_ci.parse.grammar import INLINE
from kbase_ci.parse.linksyntax import wikilink_spans
from kbase_ci.parse.textspans import CharIndex, blank, code_spans, comment_spans, in_spans

_QUERY = Query(INLINE, """
[(latex_block) (link_destination) (entity_reference) (numeric_character_reference)
 (backslash_escape)] @mask
[(uri_autolink) (email_autolink) (html_tag)] @opaque
(code_span) @code
[(inline_link) (image)] @link
""")

# Characters that can start something only the inline grammar gets right. Backticks
# alone are not among them: without `<` (HTML, autolinks), `\\` (escapes) or `](`
# (destinations) nothing outranks a code span, and `code_spans` finds them exactly.
_NEEDS_PARSE = re.compile(rb"[<$\\]|\]\(")

# A tag ends at whitespace or punctuation other than `-`, `_` and `/` (ASCII, general,
# CJK and full-width punctuation blocks), as in Obsidian.
_TAG = re.compile(
    r"(?<!\S)#([^\s!-,.:-@\[-\^`{-~\u2000-\u206f\u3000-\u303f"
    r"\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]+)"
)


@dataclass(slots=True)
class MarkdownHit:
    """A Markdown link or image found in inline text, before it becomes a `Link`."""

    start: int
    raw: str
    text: str
    dest: str
    embed: bool


@dataclass(slots=True)
class Hits:
    """What one unit of inline text holds; offsets are code points into `text`."""

    text: str
    masked: str
    """`text` with excluded spans turned into spaces (newlines kept)."""
    wikilinks: list[tuple[int, int]] = field(default_factory=list)
    markdown: list[MarkdownHit] = field(default_factory=list)
    tags: list[tuple[int, str]] = field(default_factory=list)
    in_comment: bool = False
    """Whether a `%%` comment is still open at the end of this unit."""


def find_tags(masked: str) -> list[tuple[int, str]]:
    """(offset of `#`, name) for each tag; a name needs at least one non-digit."""
    return [(m.start(), m.group(1)) for m in _TAG.finditer(masked)
            if not m.group(1).isdigit()]


_WORTH = re.compile(rb"[\[#%^]")


def worth_scanning(src: bytes, start: int = 0, end: int | None = None) -> bool:
    """False when bytes [start, end) of `src` cannot hold a link, tag, block id or comment
    delimiter: one C-level search of the note's bytes, no copy of the unit."""
    return _WORTH.search(src, start, len(src) if end is None else end) is not None


MAX_IMAGES = 64
"""tree-sitter-markdown's inline grammar takes time quadratic in the images of one unit
(1,000 `![a]` in a paragraph: 0.1 s, 4,000: 0.5 s, a 1 MB line of them: minutes). A
unit with more is parsed with each `![` read as ` [`, which the grammar handles in
linear time, and the links found right after a `!` are the images (an image inside a
link's text is then not seen: `[![badge](b.svg)](url)` is found as the image only)."""


class InlineScanner:
    """Reusable: holds one inline parser and query cursor, and the current note's bytes
    with the images of image-heavy units read as links (see MAX_IMAGES)."""

    def __init__(self) -> None:
        self._parser = Parser(INLINE)
        self._cursor = QueryCursor(_QUERY)
        self._src: bytes | None = None
        self._patched: bytearray | None = None

    def _parse(self, src: bytes | bytearray, ranges: list[Range]) -> dict[str, list[Node]]:
        self._parser.included_ranges = ranges
        tree = self._parser.parse(src)
        return self._cursor.captures(tree.root_node)

    def _images_as_links(self, src: bytes, start: int, end: int) -> bytes | bytearray:
        """`src` with every `![` of [start, end) turned into ` [` (same offsets); one copy
        per note, patched unit by unit (units never overlap)."""
        if self._src is not src or self._patched is None:
            self._src, self._patched = src, bytearray(src)
        i = src.find(b"![", start, end)
        while i >= 0:
            j = i
            while j > start and src[j - 1] == 0x5C:  # `\![`: an escaped `!`, not an image
                j -= 1
            if (i - j) % 2 == 0:
                self._patched[i] = 0x20
            i = src.find(b"![", i + 2, end)
        return self._patched

    def scan(self, src: bytes, start: int, end: int, holes: list[tuple[int, int]],
             start_point: Point, in_comment: bool) -> Hits:
        """Scan bytes [start, end) of `src`; `holes` are block markers (`> `) to skip."""
        chunk = src[start:end]
        text = chunk.decode("utf-8", "replace")
        index = None if len(text) == len(chunk) else CharIndex(chunk)

        def local(b: int) -> int:
            return b - start if index is None else index.char(b - start)

        spans = [(local(a), local(b)) for a, b in holes]
        link_nodes: list[Node] = []
        images = False
        parsed: bytes | bytearray = src
        if _NEEDS_PARSE.search(chunk) is not None:
            images = chunk.count(b"![") > MAX_IMAGES
            parsed = self._images_as_links(src, start, end) if images else src
            masks: list[tuple[int, int]] = []
            opaque: list[tuple[int, int]] = []
            for a, b, point in pieces(src, start, end, holes, start_point):
                inside = holes[bisect_left(holes, (a, a)):bisect_left(holes, (b, b))]
                caps = self._parse(parsed, _ranges(a, b, inside, point, src))
                masks.extend((local(n.start_byte), local(n.end_byte))
                             for n in caps.get("mask", ()))
                opaque.extend((local(n.start_byte), local(n.end_byte))
                              for n in caps.get("opaque", ()))
                link_nodes.extend(caps.get("link", ()))
            # Code spans by CommonMark's rule, not tree-sitter's (see `code_spans`);
            # whatever tree-sitter found starting inside one is code text.
            code = code_spans(blank(text, spans), sorted(opaque)) if b"`" in chunk else []
            if code:
                starts = [a for a, _b in code]
                masks = [m for m in masks + opaque if not in_spans(m, code, starts)]
                link_nodes = [n for n in link_nodes if not in_spans(
                    (local(n.start_byte), local(n.end_byte)), code, starts)]
            else:
                masks += opaque
            spans.extend(masks + code)
        elif b"`" in chunk:
            spans.extend(code_spans(blank(text, spans)))
        masked = blank(text, spans)
        if in_comment or "%%" in masked:
            comments, in_comment = comment_spans(masked, in_comment)
            masked = blank(masked, comments)
        hits = Hits(text, masked, in_comment=in_comment)
        if "[[" in masked:
            hits.wikilinks = wikilink_spans(masked)
        for node in link_nodes:
            hit = _markdown_hit(node, local, text, masked, images and
                                parsed[node.start_byte - 1:node.start_byte] == b" " and
                                src[node.start_byte - 1:node.start_byte] == b"!")
            if hit is not None:
                hits.markdown.append(_pasted_into(hit, text, masked) or hit)
        if "#" in masked:
            tag_text = blank(masked, hits.wikilinks) if hits.wikilinks else masked
            # "Preceded by whitespace" means in the source, not after blanking: in
            # `<span>#x</span>` the `#` follows `>`. Block markers (`> `) count as space.
            source = blank(text, spans[:len(holes)]) if holes else text
            hits.tags = [(k, name) for k, name in find_tags(tag_text)
                         if k == 0 or source[k - 1].isspace()]
        return hits


MAX_PIECE = 16 * 1024
"""The most bytes given to the inline grammar at once. It is slow on some long runs
(2.5 us a byte for unclosed `[a](`) and crashes the process past ~380 KB of them, so a
longer unit is parsed in pieces, cut at a line break, else a space, else anywhere: a
link that spans a cut of a >16 KB line is not found."""


def pieces(src: bytes, start: int, end: int, holes: list[tuple[int, int]],
           start_point: Point) -> list[tuple[int, int, Point]]:
    """[start, end) as pieces of at most MAX_PIECE bytes (never cut inside a hole, a
    block marker), each with the Point where it starts."""
    out: list[tuple[int, int, Point]] = []
    pos, point = start, start_point
    while end - pos > MAX_PIECE:
        limit = pos + MAX_PIECE
        cut = src.rfind(b"\n", pos + 1, limit) + 1 or src.rfind(b" ", pos + 1, limit) + 1
        if cut <= pos:
            cut = limit
            while cut > pos + 1 and 0x80 <= src[cut] < 0xC0:  # not inside a character
                cut -= 1
        i = bisect_left(holes, (cut, cut))
        if i and holes[i - 1][1] > cut:
            cut = holes[i - 1][1]
        out.append((pos, cut, point))
        nl = src.count(b"\n", pos, cut)
        point = Point(point.row + nl, cut - src.rfind(b"\n", pos, cut) - 1 if nl
                      else point.column + (cut - pos))
        pos = cut
    out.append((pos, end, point))
    return out


def _markdown_hit(node: Node, local: Callable[[int], int], text: str,
                  masked: str, image: bool = False) -> MarkdownHit | None:
    """`image`: a link right after a `!` that was parsed as ` ` (see MAX_IMAGES)."""
    a = local(node.start_byte) - image
    if masked[a] != text[a]:  # starts inside a comment
        return None
    label = dest = None
    for child in node.named_children:
        if child.type in ("link_text", "image_description"):
            label = text[local(child.start_byte):local(child.end_byte)]
        elif child.type == "link_destination":
            dest = text[local(child.start_byte):local(child.end_byte)]
    if dest is None:
        # `![[x.png]]` parses as an image without destination: the wikilink scan owns it.
        if image or node.type == "image" or "](" not in text[a:local(node.end_byte)]:
            return None
        dest = ""
    raw = text[a:local(node.end_byte)]
    return MarkdownHit(a, raw, label or "", dest, image or node.type == "image")


def _pasted_into(hit: MarkdownHit, text: str, masked: str) -> MarkdownHit | None:
    """The link around `hit` when `hit` is a whole destination: `[t]([https://x](https://x))`
    (a URL pasted onto a selected link text in an editor that writes `[url](url)`).
    CommonMark reads one link whose destination is `[https://x](https://x)`;
    tree-sitter-markdown only the inner one. The outer link is the one written, and it
    leads nowhere: it is returned, so the checks can report it (KB107)."""
    if hit.embed:
        return None
    a, b = hit.start, hit.start + len(hit.raw)
    i = a
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    if text[i - 2:i] != "](":
        return None
    j = b
    while j < len(text) and text[j] in " \t":
        j += 1
    if text[j:j + 1] != ")":
        return None
    close = i - 2
    open_ = masked.rfind("[", 0, close)
    if open_ < 0 or "]" in masked[open_ + 1:close] or "\n" in masked[open_:close]:
        return None
    embed = open_ > 0 and text[open_ - 1] == "!"
    start = open_ - embed
    return MarkdownHit(start, text[start:j + 1], text[open_ + 1:close], hit.raw, embed)


def _ranges(start: int, end: int, holes: list[tuple[int, int]], start_point: Point,
            src: bytes) -> list[Range]:
    """Byte ranges [start, end) minus `holes`, as tree-sitter Ranges."""
    ranges: list[Range] = []
    pos, row, col = start, start_point.row, start_point.column
    for a, b in [*holes, (end, end)]:
        if a > pos:
            nl = src.count(b"\n", pos, a)
            end_col = (a - src.rfind(b"\n", 0, a) - 1) if nl else col + (a - pos)
            ranges.append(Range(Point(row, col), Point(row + nl, end_col), pos, a))
        # Point of the byte after the hole.
        nl = src.count(b"\n", pos, b)
        row += nl
        col = (b - src.rfind(b"\n", 0, b) - 1) if nl else col + (b - pos)
        pos = b
    return ranges or [Range(start_point, start_point, start, start)]
