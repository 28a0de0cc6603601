"""A note's unlinked mentions: other notes whose prose writes its title or an alias as
words (`kbase_ci.parse.namematch`) and that do not link it, nor are linked from it
(Obsidian's "unlinked mentions" panel).

Answered from the index's `mentions.jsonl` (kbase_ci.index.unlinked) with the freshness
overlay: the rows of notes changed or deleted since the index are dropped and the
changed and added notes are searched again in the work tree; links are the overlaid
ones. A note that is itself fresh (its names may be new), or an index without the table
or with another version of it, is answered by searching every note (`source: "scan"`).

Ranked by how many times a note mentions it, then by path, then place; at most
`MAX_PLACES` places are listed per note (`count` says how many there are).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kbase_ci.index.layout import MENTIONS_FILE
from kbase_ci.parse import namematch
from kbase_ci.parse.namematch import MAX_PLACES, Matcher
from kbase_ci.parse.outline import split_lines
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.snippets import Sentences
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field


class UnlinkedMention(Record):
    """One place where note `path` names the note without a link: `text` as written,
    `count` the times `path` names it in all (places listed: at most 5)."""

    path: str
    line: int
    col: int
    text: str
    count: int
    sentence: str


class UnlinkedAnswer(Record):
    """`names`: the title and aliases looked for; `skipped`: those never looked for (too
    short, or only common words); `source`: `index` or `scan` (all notes read)."""

    note: str = json_field(keep=True)
    names: list[str]
    skipped: list[str]
    unlinked: list[UnlinkedMention]
    source: str
    index: IndexInfo


_Place = tuple[int, int, int]  # line, col, length


def _row(view: QueryView, path: str) -> list[Any] | None:
    """mentions.jsonl's row of indexed note `path` when this index has the table in this
    version (validated with the index), else None."""
    block = view.manifest.mentions
    reader = view.source.reader
    if block is None or block.version != namematch.VERSION or not reader.has(MENTIONS_FILE):
        return None
    row = reader.row(MENTIONS_FILE, view.number[path])
    return row if isinstance(row, list) else None


def _scan(view: QueryView, matcher: Matcher[str], paths: Iterable[str]
          ) -> dict[str, tuple[int, list[_Place]]]:
    out: dict[str, tuple[int, list[_Place]]] = {}
    texts = view.texts(paths)
    for path, text in texts.items():
        hits = matcher.find(text)
        if hits:
            out[path] = (len(hits), [(h.line, h.col, h.length) for h in hits[:MAX_PLACES]])
    return out


def unlinked_mentions(view: QueryView, path: str, *, linked_too: bool = False
                      ) -> tuple[list[UnlinkedMention], str]:
    """The unlinked mentions of note `path` and where they came from (`index`/`scan`);
    `linked_too`: every note naming it, linked or not (`concept` counts them all)."""
    info = view.notes[path]
    matcher: Matcher[str] = Matcher({n: [path] for n in (info.title, *info.aliases)})
    linked = {path} if linked_too else (
        {lk.target for lk in view.outgoing(path)}
        | {lk.source for lk in view.backlinks(path)} | {path})
    fresh = view.fresh
    row = _row(view, path) if path not in fresh.changed and path not in fresh.added else None
    found: dict[str, tuple[int, list[_Place]]] = {}
    if not matcher:
        source = "index" if row is not None else "scan"
    elif row is not None:
        source = "index"
        redo = {*fresh.changed, *fresh.deleted}
        for number, count, places in row:
            p = view.paths[number]
            if p not in redo and p not in linked:
                found[p] = (count, [(a, b, c) for a, b, c in places])
        found.update(_scan(view, matcher, (p for p in (*fresh.changed, *fresh.added)
                                           if p not in linked and p in view.notes)))
    else:
        source = "scan"
        found = _scan(view, matcher, (p for p in view.notes if p not in linked))
    return _records(view, found), source


def _records(view: QueryView, found: dict[str, tuple[int, list[_Place]]]
             ) -> list[UnlinkedMention]:
    texts = view.texts(sorted(found))
    out = []
    for p in sorted(found, key=lambda p: (-found[p][0], p)):
        count, places = found[p]
        lines = split_lines(texts[p])
        cut: dict[int, Sentences] = {}
        for line, col, length in sorted(places):
            if not 0 < line <= len(lines):
                continue  # a forged place: the rest of the answer still stands
            if line not in cut:
                cut[line] = Sentences(lines[line - 1])
            written = "\n".join(lines[line - 1:line + 1])[col - 1:col - 1 + length]
            out.append(UnlinkedMention(p, line, col, " ".join(written.split()), count,
                                       cut[line].at(col)))
    return out


def unlinked_answer(view: QueryView, path: str) -> UnlinkedAnswer:
    """`kbase links --unlinked NOTE`."""
    info = view.notes[path]
    names = list(dict.fromkeys((info.title, *info.aliases)))
    skipped = Matcher({n: [path] for n in names}).skipped
    mentions, source = unlinked_mentions(view, path)
    return UnlinkedAnswer(path, [n for n in names if n not in skipped], skipped, mentions,
                          source, view.index_info())
