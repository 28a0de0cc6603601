"""Links and backlinks of one note, each with its line and the sentence it sits in; links
to URLs apart (`external`), so `path: null` always means a note not written yet (or a
target outside the vault or the scope, as `status` says)."""

from __future__ import annotations

import re
from bisect import bisect_right

from kbase_ci.errors import UsageError
from kbase_ci.parse.outline import split_lines
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.notetable import LinkInfo
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_MAX_SENTENCE = 300


def sentence_at(line_text: str, col: int) -> str:
    """The sentence of `line_text` holding column `col` (1-based, code points)."""
    return Sentences(line_text).at(col)


class Sentences:
    """One line cut into sentences once (state: the cut and the sentences trimmed so
    far), so the links of a line with 20k of them are answered by bisection: cutting the
    line again per link was quadratic (minutes for one note)."""

    def __init__(self, line_text: str) -> None:
        self._line = line_text
        self._starts: list[int] = []
        self._pieces: list[str] = []
        start = 0
        for piece in _SENTENCE_END.split(line_text):
            pos = line_text.find(piece, start)
            self._starts.append(pos)
            self._pieces.append(piece)
            start = pos + len(piece)
        self._trimmed: dict[int, str] = {}

    def _holds(self, i: int, col: int) -> bool:
        return self._starts[i] <= col - 1 < self._starts[i] + len(self._pieces[i]) + 1

    def at(self, col: int) -> str:
        i = bisect_right(self._starts, col - 1) - 1
        while i > 0 and self._holds(i - 1, col):  # the first sentence holding it wins
            i -= 1
        if not (i >= 0 and self._holds(i, col)):
            i = -1  # in no sentence: the whole line
        if i not in self._trimmed:
            text = self._pieces[i] if i >= 0 else self._line
            self._trimmed[i] = _trim(text.strip())
        return self._trimmed[i]


def _trim(text: str) -> str:
    text = text.lstrip("-*+> ").strip()
    return text if len(text) <= _MAX_SENTENCE else text[:_MAX_SENTENCE - 1] + "\u2026"


class LinkRecord(Record):
    """A link with where it is: `path` is its target (null: not written yet, outside the
    vault or the scope, as `status` says) or, for a backlink, the note holding it."""

    path: str | None
    line: int
    col: int
    raw: str
    subpath: str
    status: str
    embed: bool
    anchor_found: bool | None
    sentence: str


class ExternalLink(Record):
    """A link to a URL (`scheme:` destination), in the order written."""

    url: str
    line: int
    col: int
    raw: str
    embed: bool
    sentence: str


class Where(Record):
    """A backlink, where only (`--concise`)."""

    path: str
    line: int


class LinksAnswer(Record):
    note: str = json_field(keep=True)
    links: list[LinkRecord]
    external: list[ExternalLink]
    index: IndexInfo


class BacklinksAnswer(Record):
    note: str = json_field(keep=True)
    backlinks: list[LinkRecord] | list[Where]
    index: IndexInfo


def link_records(view: QueryView, links: list[LinkInfo], *, side: str) -> list[LinkRecord]:
    """The links as records. `side` is "target" (outgoing) or "source" (backlinks)."""
    texts = view.texts(lk.source for lk in links)
    lines: dict[str, list[str]] = {}
    cut: dict[tuple[str, int], Sentences] = {}
    out: list[LinkRecord] = []
    for lk in links:
        if lk.source not in lines:
            lines[lk.source] = split_lines(texts[lk.source])
        text = lines[lk.source]
        if (lk.source, lk.line) not in cut:
            cut[lk.source, lk.line] = Sentences(
                text[lk.line - 1] if 0 < lk.line <= len(text) else "")
        path = (lk.target if lk.status == "ok" else None) if side == "target" else lk.source
        out.append(LinkRecord(path, lk.line, lk.col, lk.raw, lk.subpath, lk.status, lk.embed,
                              lk.anchor_found, cut[lk.source, lk.line].at(lk.col)))
    return out


def split_external(links: list[LinkInfo]) -> tuple[list[LinkInfo], list[LinkInfo]]:
    """(links into the vault or meant to be, links to URLs): a URL is no note, so it never
    sits among the links with `path: null` (which are notes not written yet)."""
    inside = [lk for lk in links if lk.status != "external"]
    return inside, [lk for lk in links if lk.status == "external"]


def external_records(view: QueryView, links: list[LinkInfo]) -> list[ExternalLink]:
    """Links to URLs (`scheme:` destinations), in the order written."""
    if not links:
        return []
    # Lazy: the link syntax and its parsed records are for links to URLs only.
    from kbase_ci.parse.linksyntax import link_from_raw

    out = []
    for rec, lk in zip(link_records(view, links, side="target"), links, strict=True):
        try:
            url = link_from_raw(lk.raw).target
        except UsageError:  # a stored raw link always parses; keep the answer if not
            url = lk.raw
        out.append(ExternalLink(url, rec.line, rec.col, rec.raw, rec.embed, rec.sentence))
    return out


def links_answer(view: QueryView, path: str) -> LinksAnswer:
    inside, external = split_external(view.outgoing(path))
    return LinksAnswer(path, link_records(view, inside, side="target"),
                       external_records(view, external), view.index_info())


def backlinks_answer(view: QueryView, path: str, *, concise: bool = False) -> BacklinksAnswer:
    """Who links to `path`, with line and sentence (`concise`: where only)."""
    if concise:
        return BacklinksAnswer(path, [Where(lk.source, lk.line) for lk in view.backlinks(path)],
                               view.index_info())
    return BacklinksAnswer(path, link_records(view, view.backlinks(path), side="source"),
                           view.index_info())
