"""Links and backlinks of one note, each with its line and the sentence it sits in; links
to URLs apart (`external`), so `path: null` always means a note not written yet (or a
target outside the vault or the scope, as `status` says)."""

from __future__ import annotations

from typing import Annotated

from kbase_ci.errors import UsageError
from kbase_ci.parse.outline import split_lines
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.mentions import UnlinkedAnswer, unlinked_answer
from kbase_ci.query.notetable import LinkInfo
from kbase_ci.query.snippets import Sentences
from kbase_ci.query.spec import Note, Param, Query, Session
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field


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


class LinksParams(Record):
    note: Note
    unlinked: Annotated[bool, Param(
        help="instead: notes naming it (title, alias) without a link either way",
        tool="Instead: notes naming it without a link either way.")] = False


def _links(s: Session, p: LinksParams) -> LinksAnswer | UnlinkedAnswer:
    view = s.view()
    path = view.lookup(p.note)
    return unlinked_answer(view, path) if p.unlinked else links_answer(view, path)


_WHY = {"unresolved": "not yet written", "escapes": "outside the vault",
        "out_of_scope": "outside this scope"}


def link_label(link: LinkRecord) -> str:
    """A link's target for people: its path, or why there is none, and the text written."""
    if link.path:
        return link.path
    return f"({_WHY.get(link.status, link.status)}) {link.raw}"


def _link_lines(a: LinksAnswer | UnlinkedAnswer) -> list[str]:
    if isinstance(a, UnlinkedAnswer):
        return [f"{u.path}:{u.line}:{u.col}: {u.text}  {u.sentence}" for u in a.unlinked] \
            or [f"no note names {a.note} without a link (looked for: "
                f"{', '.join(a.names) or '-'})"]
    rows = [(lk.line, lk.col, f"{link_label(lk)}  {lk.sentence}") for lk in a.links]
    rows += [(e.line, e.col, f"(external) {e.url}  {e.sentence}") for e in a.external]
    return [f"{line}: {text}" for line, _col, text in sorted(rows)] \
        or [f"no links in {a.note}"]


def _found(a: LinksAnswer | UnlinkedAnswer) -> bool:
    return bool(a.unlinked) if isinstance(a, UnlinkedAnswer) else bool(a.links or a.external)


LINKS = Query(
    "links", ("links",),
    help="links from a note (path null: referenced, not yet written; URLs apart, in "
         "external)",
    description="The note's links with line and sentence: `links` for notes and "
                "attachments (path null: not written yet, or outside the vault), "
                "`external` for URLs. `--unlinked`: instead, the notes naming it in "
                "prose (title or alias) that are not linked with it either way. Exit 0 "
                "found, 1 none, 2 no such note.",
    fold=("links", "links"),
    params=LinksParams, run=_links, text=_link_lines, found=_found,
    lists=("links", "unlinked", "external"))


class BacklinksParams(Record):
    note: Note
    concise: Annotated[bool, Param(help="paths and lines only",
                                   tool="Path and line only.")] = False


def _backlinks(s: Session, p: BacklinksParams) -> BacklinksAnswer:
    view = s.view()
    return backlinks_answer(view, view.lookup(p.note), concise=p.concise)


def _backlink_lines(a: BacklinksAnswer) -> list[str]:
    return [f"{lk.path}:{lk.line}  {getattr(lk, 'sentence', '')}".rstrip()
            for lk in a.backlinks] or [f"no note links to {a.note}"]


QUERIES = [LINKS, Query(
    "backlinks", ("backlinks",), help="notes linking to a note",
    description="Exit 0 backlinks found, 1 none, 2 no such note.",
    fold=("links", "backlinks"),
    params=BacklinksParams, run=_backlinks, text=_backlink_lines, found=lambda a: bool(a.backlinks),
    lists=("backlinks",))]
