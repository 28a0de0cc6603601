"""The notes table and the link graph (docs/index-format.md).

Rows are JSON arrays of the fields of `NoteRow`/`LinkRow` (layout.py), one per line of
`links.jsonl`, and of `notes.jsonl` less what is kept once for all notes (notetable.py),
so a query reads one note's rows without decoding the table. Notes are in path order; a
note's number is its row number, which links and similar lists use. What every query
needs for every note (path, blob, names) and the link graph's numbers (`links.npy`,
`outgoing.npy`, CSR `backlinks*.npy`) are separate small files.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.index.layout import (
    BACKLINK_IDS_FILE,
    BACKLINKS_FILE,
    BLOBS_FILE,
    LINK_ROWS_FILE,
    LINKS_FILE,
    NAMES_FILE,
    NOTE_ROWS_FILE,
    NOTES_FILE,
    OUTGOING_FILE,
    SIMILAR_FILE,
    SIMILAR_SCORES_FILE,
    UNRESOLVED_FILE,
    LinkRow,
    NoteRow,
)
from kbase_ci.index.manifest import dump_table
from kbase_ci.index.rowfile import offsets_dtype, offsets_name, write_npy, write_rows
from kbase_ci.index.storednotes import (
    blob_bytes,
    core_table,
    similar_arrays,
    stored_note_row,
    token_estimate,
)
from kbase_ci.vault.resolver import Resolver

if TYPE_CHECKING:
    from kbase_ci.parsed import ParsedNote



def notes_table(notes: Sequence[ParsedNote], blobs: Mapping[str, str],
                domains: Mapping[str, str], shards: Mapping[str, str],
                chunk_spans: Mapping[str, tuple[int, int]],
                similar: Sequence[list[list[float]]]) -> list[NoteRow]:
    rows: list[NoteRow] = []
    for i, n in enumerate(notes):
        first, count = chunk_spans.get(n.path, (0, 0))
        rows.append(NoteRow(
            path=n.path, title=n.title, aliases=list(n.aliases),
            tags=sorted({t.name for t in n.tags}),
            headings=[[h.level, h.text, h.line] for h in n.headings],
            block_ids=[[b.id, b.line] for b in n.block_ids], frontmatter=n.frontmatter,
            blob=blobs.get(n.path, ""), size=n.size, tokens=token_estimate(n.size),
            domain=domains.get(n.path, ""), shard=shards.get(n.path, ""),
            chunks=[first, count], similar=similar[i]))
    return rows


@dataclass(frozen=True)
class LinkTable:
    """The links table as written: each row's canonical JSON line, and the numbers the
    `.npy` files and `unresolved.json` are made of. Rows are in note order, so a note's
    rows are consecutive (`outgoing`)."""

    lines: list[bytes]
    sources: list[int]
    targets: list[int]
    """The target's note number, or -1 (an attachment, external, unresolved or outside)."""
    statuses: list[str]
    unresolved: dict[str, list[int]]
    """Unresolved (or escaping) target text -> link numbers, ascending."""
    n_notes: int

    def status_names(self) -> list[str]:
        return sorted(set(self.statuses))

    def linked(self) -> list[list[int]]:
        """Per note, the other notes it links to, ascending."""
        out: list[set[int]] = [set() for _ in range(self.n_notes)]
        for s, t in zip(self.sources, self.targets, strict=True):
            if t >= 0 and t != s:
                out[s].add(t)
        return [sorted(x) for x in out]


def links_table(notes: Sequence[ParsedNote], files: Sequence[str], *,
               resolve_aliases: bool = True, include_dot: bool = False,
               outside: Sequence[ParsedNote] = ()) -> LinkTable:
    """The links table of `notes` (sorted by path).

    `outside` (a scoped index, kbase_ci/scope): the other notes of the vault, so a link
    resolves as it does in the whole vault; one that lands outside is kept with status
    `out_of_scope` and no target (the scope names nothing outside itself)."""

    resolver = Resolver(sorted([*notes, *outside], key=lambda n: n.path) if outside
                        else notes, files, resolve_aliases=resolve_aliases,
                        include_dot=include_dot)
    rows = NoteRows(resolver, {n.path: i for i, n in enumerate(notes)},
                    {n.path for n in outside})
    table = LinkTable([], [], [], [], {}, len(notes))
    for i, note in enumerate(notes):
        rows.add(table, i, note)
    return table


class NoteRows:
    """Appends one note's resolved links to a LinkTable (state: the resolver)."""

    def __init__(self, resolver: Resolver, number: Mapping[str, int],
                 foreign: Collection[str] = ()) -> None:
        self.resolver, self.number, self.foreign = resolver, number, foreign

    def add(self, table: LinkTable, i: int, note: ParsedNote) -> None:
        for r in self.resolver.resolve_all(note):
            ln = r.link
            lid = len(table.lines)
            t = self.number.get(r.target) if r.target is not None else None
            away = r.target in self.foreign
            status = "out_of_scope" if away else r.status
            # A note target is its row number (paths of 60k targets are megabytes);
            # an attachment keeps its path.
            table.lines.append(dump_table(LinkRow(
                i, ln.line, ln.col, ln.raw, ln.style, ln.embed,
                t if t is not None or away else r.target, ln.subpath, ln.anchor_kind,
                status, None if away else r.anchor_found, ln.frontmatter_key)))
            table.sources.append(i)
            table.targets.append(t if t is not None else -1)
            table.statuses.append(status)
            if t is None and r.status in ("unresolved", "escapes"):
                table.unresolved.setdefault(ln.target, []).append(lid)


def write_notes(root: Path, rows: Sequence[NoteRow], statuses: Sequence[str],
                similar_k: int,
                reuse: Callable[[int, Any], bytes | None] | None = None) -> None:
    """`notes.json` (core), `names.json`, `notes.jsonl`, `blobs.npy` and the similar
    arrays (`similar_k` per note) from a `notes_table` (kbase_ci/index/storednotes.py;
    `reuse`: see `rowfile.write_rows`, given the row as stored)."""
    names: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        for name in dict.fromkeys(n.casefold() for n in (row.title, *row.aliases)):
            names.setdefault(name, []).append(i)
    core = core_table(rows, statuses, similar_k)
    (root / NOTES_FILE).write_bytes(dump_table(core.to_json()))
    (root / NAMES_FILE).write_bytes(dump_table(names))
    write_rows(root / NOTE_ROWS_FILE, [stored_note_row(r) for r in rows], reuse)
    raw = blob_bytes(core, rows)
    if raw is not None:
        import numpy as np

        write_npy(root / BLOBS_FILE, np.frombuffer(raw, dtype=np.uint8), "|u1")
    ids, scores = similar_arrays(rows, similar_k)
    write_npy(root / SIMILAR_FILE, ids, "<u2" if len(rows) <= 2**16 else "<i4")
    write_npy(root / SIMILAR_SCORES_FILE, scores, "<u2")


def write_links(root: Path, table: LinkTable, statuses: Sequence[str]) -> None:
    """`links.jsonl`, `links.npy` ([source, target note or -1, status code] per link),
    `outgoing.npy` (note i's links are rows outgoing[i]:outgoing[i+1]) and the CSR
    backlinks (`backlinks.npy` pointers into `backlinks.ids.npy` link numbers: the links
    to note t from other notes, ascending)."""
    import numpy as np

    ends = [0]
    for line in table.lines:
        ends.append(ends[-1] + len(line))
    (root / LINK_ROWS_FILE).write_bytes(b"".join(table.lines))
    write_npy(root / offsets_name(LINK_ROWS_FILE), ends, offsets_dtype(ends[-1]))
    code = {s: i for i, s in enumerate(statuses)}
    src = np.asarray(table.sources, dtype=np.int64)
    tgt = np.asarray(table.targets, dtype=np.int64)
    numbers = np.stack([src, tgt, np.asarray([code[s] for s in table.statuses],
                                             dtype=np.int64)], axis=1)
    write_npy(root / LINKS_FILE, numbers.reshape(-1, 3), "<i4")
    n = table.n_notes
    outgoing = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=outgoing[1:])
    width = offsets_dtype(len(table.lines))
    write_npy(root / OUTGOING_FILE, outgoing, width)
    back = np.flatnonzero((tgt >= 0) & (tgt != src))
    ids = back[np.argsort(tgt[back], kind="stable")]
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(tgt[back], minlength=n), out=ptr[1:])
    write_npy(root / BACKLINKS_FILE, ptr, width)
    write_npy(root / BACKLINK_IDS_FILE, ids, width)
    (root / UNRESOLVED_FILE).write_bytes(dump_table(table.unresolved))
