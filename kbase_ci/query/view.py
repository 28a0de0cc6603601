"""The vault as the index saw it, with the notes changed since overlaid: notes, links and
backlinks that are right for the work tree now, not for the index's commit."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..errors import UsageError
from ..index.shards import DomainRule
from ..model import BlockId, Heading, ParsedNote
from ..outline import note_text
from ..resolver import Resolver
from ..vault import Vault
from .freshness import Freshness, assess
from .source import IndexSource


@dataclass(frozen=True)
class NoteInfo:
    path: str
    title: str
    aliases: tuple[str, ...]
    tags: tuple[str, ...]
    domain: str
    size: int
    headings: tuple[tuple[int, str, int], ...]
    block_ids: tuple[tuple[str, int], ...]
    similar: tuple[tuple[str, float], ...]
    stale: bool


@dataclass(frozen=True)
class LinkInfo:
    source: str
    line: int
    col: int
    raw: str
    target: str | None
    """Note path, attachment path, or None (unresolved, external, escaping)."""
    subpath: str
    status: str
    embed: bool
    anchor_found: bool | None


class NoteTable(Mapping[str, NoteInfo]):
    """The current notes: index rows (turned into records only when asked for) minus the
    deleted and changed ones, plus fresh parses of the changed and added ones."""

    def __init__(self, table: dict[str, Any], paths: list[str], fresh: dict[str, NoteInfo],
                 deleted: set[str]) -> None:
        self._fields = {name: i for i, name in enumerate(table["fields"])}
        self._rows = table["rows"]
        self._paths = paths
        self._number = {p: i for i, p in enumerate(paths)}
        self._fresh = fresh
        self._deleted = deleted
        self._order = sorted({*(p for p in paths if p not in deleted), *fresh})

    def __getitem__(self, path: str) -> NoteInfo:
        if path in self._fresh:
            return self._fresh[path]
        if path in self._deleted or path not in self._number:
            raise KeyError(path)
        f, row = self._fields, self._rows[self._number[path]]
        similar = tuple((self._paths[n], float(s)) for n, s in row[f["similar"]]
                        if self._paths[n] not in self._deleted)
        return NoteInfo(path, row[f["title"]], tuple(row[f["aliases"]]), tuple(row[f["tags"]]),
                        row[f["domain"]], row[f["size"]],
                        tuple((h[0], h[1], h[2]) for h in row[f["headings"]]),
                        tuple((b[0], b[1]) for b in row[f["block_ids"]]), similar, False)

    def __contains__(self, path: object) -> bool:
        return path in self._fresh or (path in self._number and path not in self._deleted)

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    @cached_property
    def by_name(self) -> dict[str, list[str]]:
        """casefolded title or alias -> paths, without building a record per note."""
        out: dict[str, list[str]] = {}
        it, ia = self._fields["title"], self._fields["aliases"]
        for path, row in zip(self._paths, self._rows, strict=True):
            if path in self._deleted or path in self._fresh:
                continue
            for name in (row[it], *row[ia]):
                out.setdefault(name.casefold(), []).append(path)
        for info in self._fresh.values():
            for name in (info.title, *info.aliases):
                out.setdefault(name.casefold(), []).append(info.path)
        return out


class QueryView:
    """One query's view (state: the index tables and the overlay, computed lazily)."""

    def __init__(self, vault: Vault, source: IndexSource) -> None:
        self.vault = vault
        self.source = source
        self.manifest: dict[str, Any] = source.reader.manifest
        self._notes_table = source.reader.notes()
        self.fresh: Freshness = assess(vault, self._notes_table, source.reader.links)
        self.paths: list[str] = [r[self._notes_table["fields"].index("path")]
                                 for r in self._notes_table["rows"]]
        self.number = {p: i for i, p in enumerate(self.paths)}

    # -- notes -------------------------------------------------------------------------
    @cached_property
    def notes(self) -> NoteTable:
        fresh: dict[str, NoteInfo] = {}
        rule = DomainRule.parse(self.vault.config.index.domain)
        for path in (*self.fresh.changed, *self.fresh.added):
            n = self.fresh.parsed[path]
            fresh[path] = NoteInfo(
                path, n.title, n.aliases, tuple(sorted({t.name for t in n.tags})),
                rule.domain(path, n.frontmatter), n.size,
                tuple((h.level, h.text, h.line) for h in n.headings),
                tuple((b.id, b.line) for b in n.block_ids), (), True)
        return NoteTable(self._notes_table, self.paths, fresh, set(self.fresh.deleted))

    def named(self, name: str) -> list[str]:
        """Notes whose title or one of whose aliases is `name` (case-insensitive)."""
        return sorted(self.notes.by_name.get(name.strip().casefold(), ()))

    def text(self, path: str) -> str:
        nf = self.vault.note(path)
        if nf is None:
            raise UsageError(f"no note {path} in the work tree")
        return note_text(self.vault.read([nf])[path])

    def index_info(self) -> dict[str, Any]:
        src = self.manifest.get("source", {})
        return {"source_commit": src.get("commit"), "built_at": self.manifest.get("built_at"),
                "stale_notes": list(self.fresh.stale), "overlaid": self.fresh.overlaid,
                "origin": self.source.origin}

    # -- names ---------------------------------------------------------------------------
    @cached_property
    def resolver(self) -> Resolver:
        light: list[ParsedNote] = []
        for info in self.notes.values():
            parsed = self.fresh.parsed.get(info.path)
            if parsed is not None and info.stale:
                light.append(parsed)
                continue
            light.append(ParsedNote(
                info.path, info.title, info.aliases,
                headings=tuple(Heading(lv, tx, ln) for lv, tx, ln in info.headings),
                block_ids=tuple(BlockId(i, ln) for i, ln in info.block_ids)))
        return Resolver(light, self.vault.files)

    def lookup(self, name: str) -> str:
        """A note path for a path, name or alias; UsageError with a suggestion otherwise."""
        text = name.strip()
        if text in self.notes:
            return text
        if f"{text}.md" in self.notes:
            return f"{text}.md"
        exact = self.named(text)
        if exact:
            return exact[0]
        if "#" not in text:  # the resolver would read `#` as an anchor
            hit = self.resolver.lookup(text)
            if hit.target is not None and hit.target in self.notes:
                return hit.target
        raise UsageError(f"no note named {text}{self._suggest(text)}")

    def _suggest(self, text: str) -> str:
        from rapidfuzz import process

        names = {n.title: n.path for n in self.notes.values()}
        for n in self.notes.values():
            for a in n.aliases:
                names.setdefault(a, n.path)
        best = process.extractOne(text, list(names), score_cutoff=50)
        return f"; did you mean {best[0]}?" if best else ""

    # -- links ---------------------------------------------------------------------------
    @cached_property
    def _links_table(self) -> dict[str, Any]:
        return self.source.reader.links()

    @cached_property
    def _link_cols(self) -> tuple[int, ...]:
        f = self._links_table["fields"]
        return tuple(f.index(k) for k in ("source", "line", "col", "raw", "target",
                                          "subpath", "status", "embed", "anchor_found"))

    def _from_index(self, number: int) -> LinkInfo:
        row = self._links_table["rows"][number]
        src, line, col, raw, target, sub, status, embed, found = (
            row[i] for i in self._link_cols)
        path = self.paths[target] if isinstance(target, int) else target
        return LinkInfo(self.paths[src], line, col, raw, path, sub, status, embed, found)

    @cached_property
    def _overlay_links(self) -> dict[str, list[LinkInfo]]:
        out: dict[str, list[LinkInfo]] = {}
        for path in sorted({*self.fresh.changed, *self.fresh.added, *self.fresh.relinked}):
            note = self.fresh.parsed[path]
            out[path] = [LinkInfo(path, r.link.line, r.link.col, r.link.raw, r.target,
                                  r.link.subpath, r.status, r.link.embed, r.anchor_found)
                         for r in self.resolver.resolve_all(note)]
        return out

    def outgoing(self, path: str) -> list[LinkInfo]:
        if path in self._overlay_links:
            return list(self._overlay_links[path])
        first, count = self._links_table["outgoing"][self.number[path]]
        return [self._from_index(r) for r in range(first, first + count)]

    def backlinks(self, path: str) -> list[LinkInfo]:
        out: list[LinkInfo] = []
        redone = set(self._overlay_links) | set(self.fresh.deleted)
        num = self.number.get(path)
        if num is not None and path not in self.fresh.deleted:
            for r in self._links_table["backlinks"][num]:
                link = self._from_index(r)
                if link.source not in redone and link.target == path:
                    out.append(link)
        for src, links in self._overlay_links.items():
            out.extend(lk for lk in links if lk.target == path and src != path)
        return sorted(out, key=lambda lk: (lk.source, lk.line, lk.col))

    # -- whole graph ---------------------------------------------------------------------
    @cached_property
    def edges(self) -> NoteEdges:
        """Every distinct note-to-note link of the current vault (overlay applied), for
        whole-graph questions (hubs, orphans, paths, clusters, traversal)."""
        order = list(self.notes)
        node = {p: i for i, p in enumerate(order)}
        redone = set(self._overlay_links) | set(self.fresh.deleted)
        pairs: set[tuple[int, int]] = set()
        table = self._links_table
        isrc, itgt, istatus = (self._link_cols[0], self._link_cols[4], self._link_cols[6])
        for row in table["rows"]:
            target = row[itgt]
            if row[istatus] != "ok" or not isinstance(target, int):
                continue
            src, dst = self.paths[row[isrc]], self.paths[target]
            if src in redone or src == dst or dst not in node:
                continue
            pairs.add((node[src], node[dst]))
        for src, links in self._overlay_links.items():
            if src not in node:
                continue
            for lk in links:
                if lk.status == "ok" and lk.target in node and lk.target != src:
                    pairs.add((node[src], node[lk.target]))
        return NoteEdges(tuple(order), tuple(sorted(pairs)))


@dataclass(frozen=True)
class NoteEdges:
    paths: tuple[str, ...]
    """The current notes, sorted; a note's position here is its node number."""
    pairs: tuple[tuple[int, int], ...]
    """Distinct (source, target) node numbers of resolved note-to-note links, sorted;
    a link from a note to itself (`[[#Heading]]`) is not an edge."""
