"""`read`: a whole note, one section (`#heading`, nested subsections included) or one
block (`#^id`), optionally with the notes it links to, breadth first to a depth."""

from __future__ import annotations

from typing import Annotated

from kbase_ci.errors import UsageError
from kbase_ci.parse.outline import sections, split_lines
from kbase_ci.parse.parser import parse_note
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.spec import MAX_DEPTH, Param, Query, Session
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field


class Linked(Record):
    """A note the read part links to (`--expand-links`), `depth` links away: all its text,
    or within a budget its sections that say most about the link (`lines` shown, the
    headings `omitted`; kbase_ci.query.linkpack)."""

    path: str
    title: str
    depth: int
    via: str
    text: str
    lines: str | None = json_field(default=None, omit=True)
    omitted: list[str] | None = json_field(default=None, omit=True)


class ReadAnswer(Record):
    path: str
    title: str
    anchor: str | None
    start_line: int
    end_line: int
    tokens: int
    text: str
    linked: list[Linked]
    index: IndexInfo
    left_out: list[str] | None = json_field(default=None, omit=True)
    """Linked notes no section of which fit the budget."""


def split_target(view: QueryView, text: str) -> tuple[str, str]:
    """(note path, anchor) for `NOTE`, `NOTE#heading` or `NOTE#^block`. A note whose name
    holds `#` wins over reading the `#` as an anchor."""
    text = text.strip()
    first_error: UsageError | None = None
    try:
        return view.lookup(text), ""
    except UsageError as exc:
        first_error = exc
    cut = text.rfind("#")
    while cut > 0:
        try:
            return view.lookup(text[:cut]), text[cut + 1:].strip()
        except UsageError:
            cut = text.rfind("#", 0, cut)
    raise first_error


def _part(view: QueryView, path: str, anchor: str) -> tuple[str, int, int]:
    text = view.text(path)
    lines = split_lines(text)
    if not anchor:
        return text, 1, len(lines)
    note = parse_note(path, text.encode())
    if anchor.startswith("^"):
        block = anchor[1:]
        for b in note.block_ids:
            if b.id == block:
                start = end = b.line
                while start > 1 and lines[start - 2].strip():
                    start -= 1
                return "\n".join(lines[start - 1:end]), start, end
        raise UsageError(f"{path}: no block ^{block}")
    want = anchor.casefold()
    for sec in sections(note, text, nested=True):
        if sec.heading is not None and (sec.title.casefold() == want
                                        or " > ".join(sec.path).casefold() == want):
            body = "\n".join(lines[sec.start_line - 1:sec.end_line])
            return body, sec.start_line, sec.end_line
    names = ", ".join(h.text for h in note.headings) or "none"
    raise UsageError(f"{path}: no heading {anchor!r}; headings: {names}")


def read_answer(view: QueryView, target: str, *, expand: bool = False,
                depth: int = 1, max_tokens: int | None = None) -> ReadAnswer:
    """The part asked for, whole; with `expand`, the notes it links to (breadth first to
    `depth`), whole, or within `max_tokens` packed (kbase_ci.query.linkpack)."""
    path, anchor = split_target(view, target)
    body, start, end = _part(view, path, anchor)
    info = view.notes[path]
    reached: list[tuple[str, str, int]] = []
    if expand:
        seen = {path}
        frontier = [(path, start, end)]
        for level in range(1, max(depth, 0) + 1):
            nxt: list[tuple[str, int, int]] = []
            for src, lo, hi in frontier:
                for lk in view.outgoing(src):
                    tgt = lk.target
                    if lk.status != "ok" or tgt is None or tgt in seen or tgt not in view.notes:
                        continue
                    if not lo <= lk.line <= hi:
                        continue
                    seen.add(tgt)
                    reached.append((tgt, src, level))
                    nxt.append((tgt, 1, len(split_lines(view.text(tgt)))))
            frontier = nxt
    answer = ReadAnswer(path, info.title, anchor or None, start, end,
                        -(-len(body.encode()) // 4), body, [], view.index_info())
    if max_tokens is None:
        return answer._replace(linked=[Linked(p, view.notes[p].title, level, src, view.text(p))
                                       for p, src, level in reached])
    return _packed(view, answer, reached, max_tokens)


def _packed(view: QueryView, answer: ReadAnswer, reached: list[tuple[str, str, int]],
            max_tokens: int) -> ReadAnswer:
    # Lazy: only --expand-links within a budget ranks and packs sections
    from kbase_ci.query import linkpack
    from kbase_ci.query.payload import cost, dumps

    how = {p: (src, level) for p, src, level in reached}

    def made(parts: list[linkpack.Packed]) -> ReadAnswer:
        got = {p.path for p in parts}
        return answer._replace(
            linked=[Linked(p.path, view.notes[p.path].title, how[p.path][1], how[p.path][0],
                           p.text, p.lines, p.omitted if p.lines is not None else None)
                    for p in parts],
            left_out=[p for p, _, _ in reached if p not in got] or None)

    parts = linkpack.fill(view, linkpack.sections_of(view, reached),
                          lambda ps: cost(dumps(made(ps).to_json())), max_tokens)
    return made(parts)


class ReadParams(Record):
    note: Annotated[str, Param(
        positional=True, metavar="NOTE[#heading|#^block]",
        tool="")]
    section: Annotated[str | None, Param(
        cli=False, tool="A heading (`A > B` when nested) or `^blockid`.")] = None
    expand_links: Annotated[bool, Param(
        help="also return the notes it links to",
        tool="Add the text of the linked notes.")] = False
    depth: Annotated[int, Param(
        ge=0, le=MAX_DEPTH, help="link depth for --expand-links",
        tool="Hops for expand_links.")] = 1


def _run(s: Session, p: ReadParams) -> ReadAnswer:
    target = p.note.strip()
    if p.section and p.section.strip():  # a tool names the section apart
        target = f"{target}#{p.section.strip().lstrip('#')}"
    return read_answer(s.view(), target, expand=p.expand_links, depth=p.depth,
                       max_tokens=s.max_tokens if p.expand_links else None)


def _lines(a: ReadAnswer) -> list[str]:
    lines = [a.text]
    for item in a.linked:
        lines += ["", f"--- {item.path} (depth {item.depth})", item.text]
    return lines


QUERIES = [Query(
    "read", ("read",), help="print a note, one section or one block",
    description="NOTE is a path, a note name or an alias, optionally followed by #heading "
                "or #^block. Exit 0 found, 2 no such note.",
    tool="A note's text, or only one `section` of it (cheaper).",
    when="reading a note, or only the section a search hit named",
    params=ReadParams, run=_run, text=_lines, found=lambda a: True,
    # No list is what it is for: its `text` is (the linked notes share what it leaves,
    # kbase_ci.query.linkpack), so they give way first.
    lists=())]
