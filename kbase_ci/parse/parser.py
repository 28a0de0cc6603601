"""Parse one note into a ParsedNote: frontmatter, headings, block ids, links, tags.

tree-sitter-markdown gives the block structure (what is code, quote, table,
heading); `inline` scans each run of inline text on its own. The tree is walked
with a TreeCursor loop, never recursively, so a note nested 2000 levels deep
costs no Python stack. Parsers are module singletons: use processes, not threads.
"""

from __future__ import annotations

import re

from tree_sitter import Node, Parser, Point

from kbase_ci.parse.frontmatter import YamlMemo, parse_frontmatter
from kbase_ci.parse.grammar import BLOCK
from kbase_ci.parse.inline import Hits, InlineScanner, worth_scanning
from kbase_ci.parse.linksyntax import markdown_link, wikilink_from_raw
from kbase_ci.parse.notetext import NoteLines, count_lines, decode
from kbase_ci.parse.outline import note_title
from kbase_ci.parse.suppressions import find_suppressions
from kbase_ci.parsed import BlockId, Diagnostic, Heading, Link, ParsedNote, Tag

# Only these are descended into. Everything else is handled (or skipped) whole, so we
# never visit the thousands of punctuation leaves inside long inline nodes; a tree-sitter
# Query does visit them, and it went quadratic on a single 3 MB paragraph.
_CONTAINERS = frozenset({"document", "section", "block_quote", "list", "list_item"})
BINARY_SNIFF = 8192
_BLOCK_ID = re.compile(r"\^([A-Za-z0-9-]+)[ \t]*$")
# Closing emphasis, strikethrough and highlight delimiters: a `^id` right after one
# follows an inline element, like one after `]]`, `)` or a code span (rule 4).
_CLOSERS = frozenset("*_~=")
_ONLY_BLOCK_ID = re.compile(rb"\s*\^([A-Za-z0-9-]+)\s*")
_EMPTY_ROW = re.compile(rb"^([ \t>]*)(\|[ \t|]*)$", re.MULTILINE)
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_CONTINUATION = "block_continuation"
_CODE_BLOCKS = frozenset({"fenced_code_block", "indented_code_block"})


def _holes(node: Node, src: bytes) -> list[tuple[int, int]]:
    """The block markers (`> `, list indentation) inside `node`: only where it runs over
    a line break (a byte search costs less than the two Points a row test makes)."""
    if src.find(b"\n", node.start_byte, node.end_byte) < 0:
        return []
    return [(c.start_byte, c.end_byte) for c in node.named_children if c.type == _CONTINUATION]


class _NoteBuilder:
    def __init__(self, text: str) -> None:
        # tree-sitter-markdown misses a setext underline (and more) on an unterminated
        # last line; a final newline changes no position.
        text = text if text.endswith("\n") else text + "\n"
        self.src = text.encode("utf-8")
        self.lines = NoteLines(text, self.src)
        self.links: list[Link] = []
        self.tags: list[Tag] = []
        self.headings: list[Heading] = []
        self.block_ids: list[BlockId] = []
        self._stack: list[Heading] = []
        self._in_comment = False
        self.code_rows: set[int] | None = set() if "kbase-ignore" in text else None
        """1-based lines of code blocks, gathered only when a suppression may be there."""

    def run(self, block: Parser, scanner: InlineScanner) -> None:
        tree = block.parse(self.src)
        if tree.root_node.has_error:
            # tree-sitter-markdown 0.5 turns a table row of empty cells (`|  |  |`) into an
            # ERROR that swallows the rest of the note. Such rows hold nothing we extract,
            # so blank them (same length, positions unchanged) and parse again.
            patched = _EMPTY_ROW.sub(lambda m: m.group(1) + b" " * len(m.group(2)), self.src)
            if patched != self.src:
                self.src = self.lines.src = patched
                tree = block.parse(patched)
        cursor = tree.walk()
        while True:
            node = cursor.node
            if node is None:
                return
            kind = node.type
            if kind in _CONTAINERS:
                if cursor.goto_first_child():
                    continue
            elif kind == "paragraph":
                self._paragraph(node, scanner)
            elif kind == "atx_heading" or kind == "setext_heading":
                self._heading(node, kind, scanner)
            elif kind == "pipe_table":
                self._table(node, scanner)
            elif kind == "link_reference_definition" and not self._in_comment:
                self._refdef(node, scanner)
            elif kind in _CODE_BLOCKS and self.code_rows is not None:
                self.code_rows.update(range(node.start_point.row + 1, node.end_point.row + 2))
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    return

    def _paragraph(self, node: Node, scanner: InlineScanner) -> None:
        # Most paragraphs hold nothing to find: the byte prefilter over the paragraph's own
        # range (its inline text and line ends) decides before any child node is made.
        if not self._in_comment and not worth_scanning(self.src, node.start_byte,
                                                       node.end_byte):
            return
        # The paragraph's own bytes past its inline text are line ends and block markers,
        # none of which the prefilter looks for: its answer holds for the inline text.
        inline = node.child(0)
        if inline is None or inline.type != "inline":
            return
        self._block_id(self._unit(inline, scanner, _holes(inline, self.src)), inline)

    def _unit(self, node: Node, scanner: InlineScanner, holes: list[tuple[int, int]],
              start: int | None = None, point: Point | None = None) -> Hits:
        """Scan `node` as inline text (from byte `start` at `point`, when given)."""
        if start is None or point is None:
            start, point = node.start_byte, node.start_point
        hits = scanner.scan(self.src, start, node.end_byte, holes, point, self._in_comment)
        self._in_comment = hits.in_comment
        lines = self.lines
        base = lines.char_offset(start)
        for a, b in hits.wikilinks:
            line, col = lines.at(base + a)
            self.links.append(wikilink_from_raw(hits.text[a:b], line, col))
        for m in hits.markdown:
            line, col = lines.at(base + m.start)
            self.links.append(markdown_link(m.raw, m.text, m.dest, m.embed, line, col))
        for a, name in hits.tags:
            line, col = lines.at(base + a)
            self.tags.append(Tag(name, line, col))
        return hits

    def _heading_text(self, node: Node, atx: bool) -> str:
        text = self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")
        if atx:
            return _ATX_CLOSE.sub("", text).strip()
        # Setext headings may span lines, each possibly behind `>` markers.
        first, *rest = text.split("\n")
        return " ".join([first.strip(), *(ln.lstrip(" >").strip() for ln in rest)]).strip()

    def _heading(self, node: Node, kind: str, scanner: InlineScanner) -> None:
        content = node.child_by_field_name("heading_content")
        if kind == "atx_heading":
            marker = node.child(0)
            kind_name = marker.type if marker is not None else ""
            level = int(kind_name[5]) if kind_name.startswith("atx_h") else 1
            inline = content
        else:
            underline = node.child(node.child_count - 1)
            level = 2 if underline is not None and underline.type == "setext_h2_underline" else 1
            inline = content.child(0) if content is not None else None
        in_comment = self._in_comment
        text = ""
        if inline is not None and inline.type == "inline":
            if in_comment or worth_scanning(self.src, inline.start_byte, inline.end_byte):
                self._unit(inline, scanner, _holes(inline, self.src))
            text = self._heading_text(inline, kind == "atx_heading")
        if in_comment:
            return
        while self._stack and self._stack[-1].level >= level:
            self._stack.pop()
        heading = Heading(level, text, node.start_point.row + 1,
                          tuple(h.text for h in self._stack))
        self._stack.append(heading)
        self.headings.append(heading)

    def _block_id(self, hits: Hits, node: Node) -> None:
        last_nl = hits.masked.rfind("\n")
        m = _BLOCK_ID.search(hits.masked, last_nl + 1)
        if m is not None and _starts_block_id(hits, m.start(), last_nl + 1):
            line = node.end_point.row + 1 if last_nl >= 0 else node.start_point.row + 1
            self.block_ids.append(BlockId(m.group(1), line))

    def _table(self, node: Node, scanner: InlineScanner) -> None:
        rows = [r for r in node.named_children if r.type != "pipe_table_delimiter_row"]
        # A `^id` line right under a table is swallowed as a one-cell last row.
        if rows and rows[-1].type == "pipe_table_row":
            last = rows[-1]
            m = _ONLY_BLOCK_ID.fullmatch(self.src[last.start_byte:last.end_byte])
            if m is not None:
                rows.pop()
                if not self._in_comment:
                    self.block_ids.append(BlockId(m.group(1).decode(), last.start_point.row + 1))
        for row in rows:
            for cell in row.named_children:
                if cell.type != "pipe_table_cell":
                    continue
                if self._in_comment or worth_scanning(self.src, cell.start_byte, cell.end_byte):
                    self._unit(cell, scanner, [])

    def _refdef(self, node: Node, scanner: InlineScanner) -> None:
        label = dest = None
        for child in node.named_children:
            if child.type == "link_label":
                label = self.src[child.start_byte:child.end_byte].decode("utf-8", "replace")
            elif child.type == "link_destination":
                dest = self.src[child.start_byte:child.end_byte].decode("utf-8", "replace")
        if label is not None and label.startswith("[^"):
            self._footnote(node, scanner)
            return
        if label is None or dest is None:
            return
        raw = self.src[node.start_byte:node.end_byte].decode("utf-8", "replace").strip()
        line, col = self.lines.at(self.lines.char_offset(node.start_byte))
        self.links.append(markdown_link(raw, label[1:-1], dest, False, line, col))


    def _footnote(self, node: Node, scanner: InlineScanner) -> None:
        """`[^1]: [[Target]]`: CommonMark reads a reference definition (label `^1`,
        destination `[[Target]]`), Obsidian a footnote whose text holds a link; its text
        after the label is scanned like a paragraph."""
        label = node.child(0)
        if label is None:
            return
        self._unit(node, scanner, _holes(node, self.src), label.end_byte, label.end_point)


def _starts_block_id(hits: Hits, k: int, line_start: int) -> bool:
    """Rule 4 of docs/resolution.md: a `^id` at the end of a block counts at the start of
    its line, after whitespace, or directly after an inline element (`![[pic.png]]^fig`,
    `[a](b)^x`, a code span, `**bold**^x`); after a plain word (`text^x`) it does not.
    Code spans, HTML and math are blanked to spaces in `hits.masked` already."""
    if k == line_start:
        return True
    before = hits.masked[k - 1]
    if before in " \t":
        return True
    if before == "]" and any(b == k for _a, b in hits.wikilinks):
        return True
    if before == ")" and any(h.start + len(h.raw) == k for h in hits.markdown):
        return True
    return before in _CLOSERS and k - 2 >= line_start and not hits.masked[k - 2].isspace()


_block_parser: Parser | None = None
_scanner: InlineScanner | None = None


def _parsers() -> tuple[Parser, InlineScanner]:
    global _block_parser, _scanner
    if _block_parser is None or _scanner is None:
        _block_parser, _scanner = Parser(BLOCK), InlineScanner()
    return _block_parser, _scanner


def parse_note(path: str, data: bytes, *, max_bytes: int = 8_000_000,
               yaml_memo: YamlMemo | None = None) -> ParsedNote:
    """Parse the bytes of one note. Bad input gives diagnostics, never an exception.
    `yaml_memo`: frontmatter loaded before, by its text (see `YamlMemo`)."""
    title = note_title(path)
    size = len(data)
    if size > max_bytes:
        return ParsedNote(path, title, size=size, diagnostics=(Diagnostic(
            "KB003", f"file is {size} bytes, over the {max_bytes}-byte limit; not parsed",
            severity="warning"),))
    nul = data.find(b"\0", 0, BINARY_SNIFF)
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        return ParsedNote(path, title, size=size, diagnostics=(Diagnostic(
            "KB002", "binary file (NUL byte); not parsed", line, 1, "error"),))
    text, bad_utf8 = decode(data)
    text = text.removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    diags: list[Diagnostic] = [bad_utf8] if bad_utf8 else []

    fm = parse_frontmatter(text, yaml_memo)
    diags.extend(fm.diagnostics)
    # Blank the frontmatter out, keeping its lines, so body positions stay true.
    body = "\n" * fm.end_line + text[fm.body_start:] if fm.end_line else text

    builder = _NoteBuilder(body)
    block, scanner = _parsers()
    builder.run(block, scanner)

    links = sorted([*fm.links, *builder.links], key=lambda ln: (ln.line, ln.col))
    quiet = () if builder.code_rows is None else find_suppressions(
        text, builder.code_rows, fm.end_line + 1)
    return ParsedNote(
        path=path,
        title=title,
        aliases=fm.aliases,
        tags=(*fm.tags, *builder.tags),
        frontmatter=fm.data,
        frontmatter_end=fm.end_line,
        headings=tuple(builder.headings),
        block_ids=tuple(builder.block_ids),
        links=tuple(links),
        diagnostics=tuple(diags),
        size=size,
        lines=count_lines(text),
        suppressions=quiet,
    )
