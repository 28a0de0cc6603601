"""The notes table and the link graph (docs/index-format.md, format 2).

Rows are JSON arrays in the order of `NOTE_FIELDS`/`LINK_FIELDS`, one per line of
`notes.jsonl`/`links.jsonl`, so a query reads one note's rows without decoding the
table. Notes are in path order; a note's number is its row number, which links and
similar lists use. What every query needs for every note (path, blob, names) and the
link graph's numbers (`links.npy`, `outgoing.npy`, CSR `backlinks*.npy`) are separate
small files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model import ParsedNote

NOTE_FIELDS = ("path", "title", "aliases", "tags", "headings", "block_ids", "frontmatter",
               "blob", "size", "tokens", "domain", "shard", "chunks", "similar")
LINK_FIELDS = ("source", "line", "col", "raw", "style", "embed", "target", "subpath",
               "anchor", "status", "anchor_found", "key")


def token_estimate(size: int) -> int:
    """Rough LLM tokens for a note of `size` bytes (~4 bytes per token of English)."""
    return (size + 3) // 4


def notes_table(notes: Sequence[ParsedNote], blobs: Mapping[str, str],
                domains: Mapping[str, str], shards: Mapping[str, str],
                chunk_spans: Mapping[str, tuple[int, int]],
                similar: Sequence[list[list[float]]], similar_k: int) -> dict[str, Any]:
    rows: list[list[Any]] = []
    for i, n in enumerate(notes):
        tags = sorted({t.name for t in n.tags})
        first, count = chunk_spans.get(n.path, (0, 0))
        rows.append([
            n.path, n.title, list(n.aliases), tags,
            [[h.level, h.text, h.line] for h in n.headings],
            [[b.id, b.line] for b in n.block_ids],
            n.frontmatter, blobs.get(n.path, ""), n.size, token_estimate(n.size),
            domains.get(n.path, ""), shards.get(n.path, ""), [first, count], similar[i],
        ])
    return {"fields": list(NOTE_FIELDS), "rows": rows, "similar_k": similar_k}


def link_graph(notes: Sequence[ParsedNote], files: Sequence[str], *,
               resolve_aliases: bool = True, outside: Sequence[ParsedNote] = ()
               ) -> tuple[dict[str, Any], list[list[int]]]:
    """The links table, and per note the numbers of the notes it links to.

    `outside` (a scoped index, kbase_ci/scope): the other notes of the vault, so a link
    resolves as it does in the whole vault; one that lands outside is kept with status
    `out_of_scope` and no target (the scope names nothing outside itself)."""
    number = {n.path: i for i, n in enumerate(notes)}
    foreign = {n.path for n in outside}
    from ..resolver import Resolver

    resolver = Resolver(sorted([*notes, *outside], key=lambda n: n.path) if outside
                        else notes, files, resolve_aliases=resolve_aliases)
    rows: list[list[Any]] = []
    outgoing: list[list[int]] = []
    backlinks: list[list[int]] = [[] for _ in notes]
    unresolved: dict[str, list[int]] = {}
    linked: list[list[int]] = []
    for i, note in enumerate(notes):
        first = len(rows)
        targets: set[int] = set()
        for r in resolver.resolve_all(note):
            ln = r.link
            lid = len(rows)
            t = number.get(r.target) if r.target is not None else None
            away = r.target in foreign
            # A note target is its row number (paths of 60k targets are megabytes);
            # an attachment keeps its path.
            rows.append([i, ln.line, ln.col, ln.raw, ln.style, ln.embed,
                         t if t is not None or away else r.target, ln.subpath,
                         ln.anchor_kind, "out_of_scope" if away else r.status,
                         None if away else r.anchor_found, ln.frontmatter_key])
            if t is not None:
                if t != i:  # `[[#Heading]]` in the note itself is not a backlink
                    backlinks[t].append(lid)
                    targets.add(t)
            elif r.status in ("unresolved", "escapes"):
                unresolved.setdefault(ln.target, []).append(lid)
        outgoing.append([first, len(rows) - first])
        linked.append(sorted(targets))
    table = {
        "fields": list(LINK_FIELDS),
        "rows": rows,
        "outgoing": outgoing,
        "backlinks": backlinks,
        "unresolved": unresolved,
    }
    return table, linked


def write_notes(root: Path, table: dict[str, Any], statuses: Sequence[str]) -> None:
    """`notes.json` (core), `names.json` and `notes.jsonl` from a `notes_table`."""
    from .manifest import dump_table
    from .reader import NAMES_FILE, NOTE_ROWS_FILE, NOTES_FILE
    from .rowfile import write_rows

    f = {name: i for i, name in enumerate(table["fields"])}
    rows = table["rows"]
    names: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        for name in dict.fromkeys(n.casefold() for n in (row[f["title"]], *row[f["aliases"]])):
            names.setdefault(name, []).append(i)
    core = {"paths": [r[f["path"]] for r in rows], "blobs": [r[f["blob"]] for r in rows],
            "similar_k": table["similar_k"], "link_statuses": list(statuses)}
    (root / NOTES_FILE).write_bytes(dump_table(core))
    (root / NAMES_FILE).write_bytes(dump_table(names))
    write_rows(root / NOTE_ROWS_FILE, rows)


def link_statuses(graph: dict[str, Any]) -> list[str]:
    col = LINK_FIELDS.index("status")
    return sorted({row[col] for row in graph["rows"]})


def write_links(root: Path, graph: dict[str, Any], n_notes: int,
                statuses: Sequence[str]) -> None:
    """`links.jsonl`, `links.npy` ([source, target note or -1, status code] per link),
    `outgoing.npy` (note i's links are rows outgoing[i]:outgoing[i+1]) and the CSR
    backlinks (`backlinks.npy` pointers into `backlinks.ids.npy` link numbers)."""
    import numpy as np

    from .manifest import dump_table
    from .reader import (
        BACKLINK_IDS_FILE,
        BACKLINKS_FILE,
        LINK_ROWS_FILE,
        LINKS_FILE,
        OUTGOING_FILE,
        UNRESOLVED_FILE,
    )
    from .rowfile import write_npy, write_rows

    isrc, itgt, ist = (LINK_FIELDS.index(k) for k in ("source", "target", "status"))
    code = {s: i for i, s in enumerate(statuses)}
    rows = graph["rows"]
    write_rows(root / LINK_ROWS_FILE, rows)
    numbers = [[r[isrc], r[itgt] if isinstance(r[itgt], int) else -1, code[r[ist]]]
               for r in rows]
    write_npy(root / LINKS_FILE, np.asarray(numbers, dtype=np.int32).reshape(-1, 3), "<i4")
    outgoing = [0] * (n_notes + 1)
    for i, (first, count) in enumerate(graph["outgoing"]):
        outgoing[i + 1] = first + count
    write_npy(root / OUTGOING_FILE, outgoing, "<i4")
    ptr = [0]
    for ids in graph["backlinks"]:
        ptr.append(ptr[-1] + len(ids))
    write_npy(root / BACKLINKS_FILE, ptr, "<i4")
    write_npy(root / BACKLINK_IDS_FILE, [i for ids in graph["backlinks"] for i in ids], "<i4")
    (root / UNRESOLVED_FILE).write_bytes(dump_table(graph["unresolved"]))
