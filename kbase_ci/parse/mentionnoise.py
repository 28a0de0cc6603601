"""Parts of a note that look like prose to the concept scan but are not (issue 31): math,
Excalidraw drawings kept as Markdown, and code-like tables. `kbase_ci.parse.conceptmentions`
blanks them (newlines kept, so lines and columns stay put) before it looks for names.

- Math: `$$ ... $$` (over lines too) and inline `$...$` written as Obsidian and pandoc
  read it: no space after the opening `$`, none before the closing one, and no digit
  after it (so "$5 and $10" stays prose).
- Excalidraw: a note whose frontmatter has `excalidraw-plugin` is a drawing (nothing of
  it counts); in other notes the plugin's sections (`Text Elements`, `Drawing`,
  `Embedded Files`, `Excalidraw Data`) run to the next heading of their level or above,
  and its `EXCALIDRAW VIEW` banner line is blanked.
- Code-like tables: a pipe table most of whose body cells (numbers, dashes and
  backticked code aside) are bare identifiers, registers or hex values (`EAX`, `0x1F`,
  `r15`, `max_conn`) is a listing, not prose: its capitalised cells are values, never
  names. Numbers and backticked code are neutral: a class table of levels and bonuses
  and an option table (`` `task.due` `` | what it means) are prose about their rows.

Every scan is linear in the text: finds and one-line regexes that cannot cross a `$`.
"""

from __future__ import annotations

import re

_INLINE_MATH = re.compile(r"(?<![\\$`])\$(?![\s$])[^$\n`]*?(?<![\s\\])\$(?![\d$])")
_FRONTMATTER = re.compile(r"---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_DRAWING_KEY = re.compile(r"^excalidraw-plugin[ \t]*:", re.MULTILINE)
_DRAWING_HEADING = re.compile(
    r"^(#{1,6})[ \t]+(?:Text Elements|Drawing|Embedded [Ff]iles|Excalidraw Data)[ \t]*$",
    re.MULTILINE)
_ANY_HEADING = re.compile(r"^(#{1,6})[ \t]", re.MULTILINE)
_BANNER = re.compile(r"^.*EXCALIDRAW VIEW.*$", re.MULTILINE)
# Matched against the row with its trailing blanks cut: two `[ \t]*` side by side at
# the end backtracked against each other (`|---` and 40k spaces: 12 s).
_DELIMITER_ROW = re.compile(r"^ {0,3}\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?$")
_CODE_CELL = re.compile(
    r"0[xX][0-9A-Fa-f_]+|[A-Za-z]{1,4}[0-9]+[A-Za-z0-9_]*|[A-Z][A-Z0-9_]+"
    r"|[a-z_][a-z0-9]*(?:_[a-z0-9]+)+|[A-Za-z_][\w.]*(?:\[[0-9:]+\]|\(\))")
"""A cell that is an identifier: hex, a register (`r15`, `x0`, `CR3`), an all-caps
name (`EAX`, `IN_PROGRESS`), a snake_case name, `a.b()`, `bits[7:0]`."""
_NEUTRAL_CELL = re.compile(r"`[^`]*`|[-+~]?[0-9][^A-Za-z]*|[0-9]+(?:st|nd|rd|th)|[-–—?]?")
"""A cell that says nothing either way: code (an option table documents its backticked
identifiers), a number (a class table's levels and bonuses), a dash, nothing."""



def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each span (in order, not overlapping) blanked, newlines kept: one
    join, not a copy of the text per span."""
    parts, pos = [], 0
    for a, b in spans:
        parts += [text[pos:a], re.sub(r"[^\n]", " ", text[a:b])]
        pos = b
    return "".join([*parts, text[pos:]])


def is_drawing_path(path: str) -> bool:
    """An Excalidraw note by its name (`Diagram.excalidraw.md`)."""
    return path.casefold().endswith(".excalidraw.md")


def is_drawing(text: str) -> bool:
    """An Excalidraw note (its frontmatter says so): a drawing, not prose."""
    if not text.startswith("---"):
        return False
    m = _FRONTMATTER.match(text)
    return bool(m and _DRAWING_KEY.search(m.group(1)))


def _math(text: str) -> str:
    if "$$" in text:
        parts, pos = [], 0
        while (i := text.find("$$", pos)) >= 0:
            j = text.find("$$", i + 2)
            if j < 0:
                break
            parts += [text[pos:i], re.sub(r"[^\n]", " ", text[i:j + 2])]
            pos = j + 2
        text = "".join([*parts, text[pos:]])
    if "$" in text:
        text = _INLINE_MATH.sub(lambda m: " " * len(m.group(0)), text)
    return text


def _drawing_sections(text: str) -> str:
    if "EXCALIDRAW VIEW" in text:
        text = _BANNER.sub(lambda m: " " * len(m.group(0)), text)
    starts = list(_DRAWING_HEADING.finditer(text))
    if not starts:
        return text
    heads = [(m.start(), len(m.group(1))) for m in _ANY_HEADING.finditer(text)]
    spans: list[tuple[int, int]] = []
    k = 0  # heads before it were passed: each scan starts where the last one stopped
    for m in starts:
        if spans and m.start() < spans[-1][1]:
            continue  # inside a section already blanked (nested or repeated)
        level = len(m.group(1))
        while k < len(heads) and heads[k][0] <= m.start():
            k += 1
        while k < len(heads) and heads[k][1] > level:
            k += 1
        spans.append((m.start(), heads[k][0] if k < len(heads) else len(text)))
    return _blank(text, spans)


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip().strip("*_") for c in body.split("|")]


def _code_tables(text: str) -> str:
    lines = text.split("\n")
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line) + 1
    spans, i = [], 1
    while i < len(lines):
        if "|" in lines[i - 1] and "-" in lines[i] and _DELIMITER_ROW.match(lines[i].rstrip()):
            end = i + 1
            while end < len(lines) and "|" in lines[end] and lines[end].strip():
                end += 1
            cells = [c for row in lines[i + 1:end] for c in _cells(row)
                     if not _NEUTRAL_CELL.fullmatch(c)]
            code = sum(bool(_CODE_CELL.fullmatch(c)) for c in cells)
            if code >= 2 and 2 * code > len(cells):
                spans.append((offsets[i - 1], offsets[end - 1] + len(lines[end - 1])))
            i = end + 1
        else:
            i += 1
    return _blank(text, spans) if spans else text


def blank_noise(text: str) -> str:
    """`text` (frontmatter, fences and comments already blanked, headings still there)
    with math, drawing sections and code-like tables blanked, newlines kept."""
    if "$" in text:
        text = _math(text)
    if "Text Elements" in text or "Drawing" in text or "EXCALIDRAW" in text \
            or "Embedded" in text or "Excalidraw Data" in text:
        text = _drawing_sections(text)
    if "|" in text and "---" in text:
        text = _code_tables(text)
    return text
