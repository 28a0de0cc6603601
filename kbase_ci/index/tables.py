"""The notes table and the link graph: `notes.json` and `links.json`.

Both are column-described row tables (`fields` + `rows`) rather than lists of objects:
at 10k notes and 60k links the repeated keys alone would be megabytes. Rows are in
note path order; a note's number is its row number, which links and similar lists use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model import ParsedNote
from ..resolver import Resolver

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
               resolve_aliases: bool = True) -> tuple[dict[str, Any], list[list[int]]]:
    """The links table, and per note the numbers of the notes it links to."""
    number = {n.path: i for i, n in enumerate(notes)}
    resolver = Resolver(notes, files, resolve_aliases=resolve_aliases)
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
            # A note target is its row number (paths of 60k targets are megabytes);
            # an attachment keeps its path.
            rows.append([i, ln.line, ln.col, ln.raw, ln.style, ln.embed,
                         t if t is not None else r.target, ln.subpath, ln.anchor_kind,
                         r.status, r.anchor_found, ln.frontmatter_key])
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
