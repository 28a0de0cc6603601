"""The note-to-note link graph of a vault: orphans, gaps, and a note's neighbourhood.

Orphans are notes nobody links to: `isolated` ones link nowhere either. Gaps are link
targets that resolve to nothing, grouped by the name written, with every place that
links there (a gap linked from many notes is a note worth writing). Only note-to-note
links count as edges; a link from a note to itself (`[[#Heading]]`) is not one.
The PR report diffs two of these; issue 6's orphans/gaps queries reuse the records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from kbase_ci.parsed import Count, Many, ParsedNote, RepoPath, Text
from kbase_ci.typedjson import Record
from kbase_ci.vault.globs import any_match
from kbase_ci.vault.notestore import NoteStore, target_key
from kbase_ci.vault.resolver import ResolvedLink, Resolver

GapKind = Literal["note", "file"]

_ATTACHMENT_EXTENSION_LIST = """avif bmp gif heic ico jpeg jpg png svg tif tiff webp flac m4a
mp3 ogg wav 3gp mkv mov mp4 ogv webm pdf canvas base excalidraw csv tsv json xml yaml yml
txt html htm zip gz tar docx xlsx pptx odt ods epub drawio"""
ATTACHMENT_EXTENSIONS = frozenset(_ATTACHMENT_EXTENSION_LIST.split())
"""File types a link names as an attachment (Obsidian's own formats and the documents,
data and archives vaults keep beside notes). Any other dot is part of a note's name:
`[[Node.js]]` is a note to write, as Obsidian creates `Node.js.md` for it."""


def gap_kind(target: str) -> GapKind:
    """`file` when an unresolved target names an attachment, else `note`."""
    name = target.rsplit("/", 1)[-1]
    ext = name.rpartition(".")[2].lower() if "." in name else ""
    return "file" if ext in ATTACHMENT_EXTENSIONS else "note"


class Orphan(Record):
    path: RepoPath
    isolated: bool
    """No links in or out; otherwise it links out but nothing links to it."""
    outgoing: Count
    """Distinct notes it links to."""


class GapSource(Record):
    path: RepoPath
    line: Count
    col: Count
    raw: Text


class Gap(Record):
    key: Text
    """Normalised target (lower case, NFC, no `.md`): links spelled differently group."""
    target: Text
    """The target as first written (in path order)."""
    kind: GapKind
    sources: Many[GapSource]


class LinkGraph:
    """Edges between the notes of one vault (state: adjacency built once)."""

    def __init__(self, notes: Sequence[str], edges: Iterable[tuple[str, str]],
                 unresolved: Iterable[tuple[str, GapSource, GapKind]]) -> None:
        self.notes: tuple[str, ...] = tuple(sorted(notes))
        out: dict[str, set[str]] = {p: set() for p in self.notes}
        inc: dict[str, set[str]] = {p: set() for p in self.notes}
        for src, dst in edges:
            if src != dst and src in out and dst in inc:
                out[src].add(dst)
                inc[dst].add(src)
        self.outgoing = {p: tuple(sorted(v)) for p, v in out.items()}
        self.incoming = {p: tuple(sorted(v)) for p, v in inc.items()}
        self._unresolved = list(unresolved)

    def orphans(self) -> list[Orphan]:
        return [Orphan(p, not self.outgoing[p], len(self.outgoing[p]))
                for p in self.notes if not self.incoming[p]]

    def gaps(self) -> list[Gap]:
        grouped: dict[str, list[tuple[str, GapSource, GapKind]]] = {}
        for target, src, kind in self._unresolved:
            grouped.setdefault(target_key(target), []).append((target, src, kind))
        out = []
        for key in sorted(grouped):
            rows = sorted(grouped[key], key=lambda r: (r[1].path, r[1].line, r[1].col))
            out.append(Gap(key, rows[0][0], rows[0][2], tuple(r[1] for r in rows)))
        return out

    def neighbourhood(self, focus: Sequence[str], max_nodes: int = 40
                      ) -> tuple[list[str], list[tuple[str, str]]]:
        """`focus` notes (those in the graph) and their direct neighbours, the best-connected
        neighbours first, capped at `max_nodes`; and the edges among the chosen notes."""
        chosen = [p for p in dict.fromkeys(focus) if p in self.outgoing][:max_nodes]
        seen = set(chosen)
        near: dict[str, int] = {}
        for p in chosen:
            for q in (*self.outgoing[p], *self.incoming[p]):
                if q not in seen:
                    near[q] = near.get(q, 0) + 1
        for q, _ in sorted(near.items(), key=lambda kv: (-kv[1], kv[0])):
            if len(chosen) >= max_nodes:
                break
            chosen.append(q)
            seen.add(q)
        edges = [(a, b) for a in chosen for b in self.outgoing[a] if b in seen]
        return chosen, edges


def link_graph(notes: Sequence[ParsedNote] | NoteStore, files: Sequence[str] = (), *,
               resolve_aliases: bool = True, include_dot: bool = False,
               ignore_targets: Sequence[str] = (), markdown_links: bool = True) -> LinkGraph:
    """The graph of `notes`, resolved with Obsidian's rules against `files` (attachments).

    `ignore_targets` and `markdown_links` mean what they mean in `.kbase.yml` `links:`:
    a target the checks ignore is not a gap either.
    """
    resolver = Resolver(notes, files, resolve_aliases=resolve_aliases, include_dot=include_dot)
    all_notes = notes.all() if isinstance(notes, NoteStore) else list(notes)
    return graph_of([n.path for n in all_notes], (resolver.resolve_all(n) for n in all_notes),
                    ignore_targets=ignore_targets, markdown_links=markdown_links)


def graph_of(paths: Sequence[str], resolved: Iterable[Sequence[ResolvedLink]], *,
             ignore_targets: Sequence[str] = (), markdown_links: bool = True) -> LinkGraph:
    """The graph from links already resolved (a check run's), one list per note."""
    edges: list[tuple[str, str]] = []
    unresolved: list[tuple[str, GapSource, GapKind]] = []
    is_note = set(paths)
    for links in resolved:
        for r in links:
            link = r.link
            if r.status == "ok" and r.target in is_note:
                edges.append((r.source, r.target))
            elif r.status == "unresolved":
                if link.style == "markdown" and not markdown_links:
                    continue
                if ignore_targets and any_match(ignore_targets, link.target):
                    continue
                unresolved.append((link.target, GapSource(r.source, link.line, link.col,
                                                          link.raw), gap_kind(link.target)))
    return LinkGraph(paths, edges, unresolved)
