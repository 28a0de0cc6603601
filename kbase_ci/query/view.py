"""The vault as the index saw it, with the notes changed since overlaid: notes, links and
backlinks that are right for the work tree now, not for the index's commit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from kbase_ci.errors import IndexFormatError, UsageError
from kbase_ci.index.layout import (
    BACKLINK_IDS_FILE,
    BACKLINKS_FILE,
    LINKS_FILE,
    OUTGOING_FILE,
)
from kbase_ci.index.manifest import IndexManifest
from kbase_ci.index.rowfile import int_table
from kbase_ci.parse.outline import note_text
from kbase_ci.query.answer import IndexInfo, ScopeRef
from kbase_ci.query.discovery import IndexSource
from kbase_ci.query.freshness import Freshness, assess
from kbase_ci.query.notetable import LinkInfo, NoteEdges, NoteInfo, NoteTable
from kbase_ci.vault.notefiles import Vault

if TYPE_CHECKING:
    from kbase_ci.parsed import ParsedNote
    from kbase_ci.vault.resolver import Resolver


class QueryView:
    """One query's view (state: the overlay and records, computed lazily; the decoded
    index tables stay on the source's reader, so a new view per call is cheap)."""

    def __init__(self, vault: Vault, source: IndexSource) -> None:
        self.vault = vault
        self.source = source
        reader = source.reader
        self.manifest: IndexManifest = reader.manifest
        self.paths: list[str] = reader.core().paths
        self.number: dict[str, int] = reader.note_numbers()
        self.fresh: Freshness = assess(vault, reader, source.member)
        self._texts: dict[str, str] = {}

    # -- notes -------------------------------------------------------------------------
    @cached_property
    def notes(self) -> NoteTable:
        fresh: dict[str, NoteInfo] = {}
        changed = (*self.fresh.changed, *self.fresh.added)
        if changed:
            from kbase_ci.index.shards import DomainRule  # only for notes changed since

            rule = DomainRule.parse(self.vault.config.index.domain)
        for path in changed:
            n = self.fresh.parsed[path]
            fresh[path] = NoteInfo(
                path, n.title, n.aliases, tuple(sorted({t.name for t in n.tags})),
                rule.domain(path, n.frontmatter), n.size,
                tuple((h.level, h.text, h.line) for h in n.headings),
                tuple((b.id, b.line) for b in n.block_ids), (), True)
        return NoteTable(self.source.reader, self.paths, self.number, fresh,
                         set(self.fresh.deleted), self.renamed)

    @cached_property
    def renamed(self) -> dict[str, str]:
        """Indexed paths moved since the index (`git mv`: same blob, new path) -> their
        new path, so the index's similar lists can follow them."""
        if not (self.fresh.deleted and self.fresh.added):
            return {}
        blobs = self.source.reader.blobs()
        gone: dict[str, list[str]] = {}
        for path in self.fresh.deleted:
            if path in self.number:
                gone.setdefault(blobs[self.number[path]], []).append(path)
        added = set(self.fresh.added)
        new: dict[str, list[str]] = {}
        for nf in self.vault.notes:
            if nf.path in added and nf.sha in gone:
                new.setdefault(nf.sha, []).append(nf.path)
        # Only a one-to-one match is a move; two copies of one text say nothing.
        return {olds[0]: new[sha][0] for sha, olds in gone.items()
                if len(olds) == 1 and len(new.get(sha, ())) == 1}

    def named(self, name: str) -> list[str]:
        """Notes whose title or one of whose aliases is `name` (case-insensitive)."""
        return sorted(self.notes.named(name.strip().casefold()))

    def text(self, path: str) -> str:
        got = self._texts.get(path)
        if got is None:
            got = self.texts([path])[path]
        return got

    def texts(self, paths: Iterable[str]) -> dict[str, str]:
        """The work tree's text of `paths`, read together (one git process for all)."""
        asked = list(dict.fromkeys(paths))
        want = [p for p in asked if p not in self._texts]
        files = []
        for path in want:
            nf = self.vault.note(path)
            if nf is None:
                raise UsageError(f"no note {path} in the work tree")
            files.append(nf)
        if files:
            data = self.vault.read(files)
            self._texts.update((nf.path, note_text(data[nf.path])) for nf in files)
        return {p: self._texts[p] for p in asked}

    def index_info(self) -> IndexInfo:
        scope = self.source.scope
        return IndexInfo(self.manifest.source.commit, self.manifest.built_at,
                         len(self.fresh.stale), self.fresh.stale, self.fresh.overlaid,
                         self.source.origin,
                         ScopeRef(scope["name"], scope["stale"], scope["reason"])
                         if scope is not None else None)

    # -- names ---------------------------------------------------------------------------
    @cached_property
    def resolver(self) -> Resolver:
        """Names of the notes this index shows (a scope: its own notes only)."""
        return self._resolver(())

    @cached_property
    def outside(self) -> frozenset[str]:
        """A scope: the work tree's notes outside it, which its links resolve to as
        `out_of_scope` (empty for the main index)."""
        return frozenset(n.path for n in self._outside_notes)

    @cached_property
    def _outside_notes(self) -> list[ParsedNote]:
        member = self.source.member
        if member is None:
            return []
        current = {n.path: n.sha for n in self.vault.notes}
        # Unchanged since the main index: its names and anchors; otherwise the fresh parse
        unchanged = [p for p, sha in member.main.items() if p not in self.number
                     and p not in self.fresh.outside and current.get(p) == sha]
        return sorted([*member.light(unchanged), *self.fresh.outside.values()],
                      key=lambda n: n.path)

    @cached_property
    def link_resolver(self) -> Resolver:
        """What links are resolved against: a scope's links as its build resolves them,
        against the whole vault (`index.tables.links_table(outside=)`)."""
        return self._resolver(self._outside_notes) if self._outside_notes else self.resolver

    def _resolver(self, outside: Sequence[ParsedNote]) -> Resolver:
        # Lazy: the resolver and the parsed records (~20 ms of imports: their frozen
        # dataclasses) are for a name to resolve; a query by path or title needs neither.
        from kbase_ci.parsed import BlockId, Heading, ParsedNote
        from kbase_ci.vault.resolver import Resolver

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
        if outside:
            light = sorted([*light, *outside], key=lambda n: n.path)
        config = self.vault.config
        return Resolver(light, self.vault.files, resolve_aliases=config.links.resolve_aliases,
                        include_dot=config.vault.include_dot_folders)

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
        raise UsageError(f"no note named {text}{self._whole(text) or self._suggest(text)}")

    def _whole(self, text: str) -> str:
        """`Process` names `Process (进程)` only in part: as Obsidian leaves `[[Process]]`
        unresolved, a query does not guess; it says the exact name to write."""
        # Lazy: only a name no note has needs the name parts (every query loads this module)
        from kbase_ci.parse.conceptmentions import name_keys, term_key

        key = term_key(text)
        whole = sorted({name for info in self.notes.values()
                        for name in (info.title, *info.aliases)
                        if term_key(name) != key and key in name_keys(name)})
        if not whole:
            return ""
        names = " or ".join(f'"{n}"' for n in whole[:3])
        return f"; write the whole name {names} (as in a link, a part of a name finds no note)"

    def _suggest(self, text: str) -> str:
        # Lazy: only a name no note has needs the name search.
        from kbase_ci.query.namesearch import Named, suggest

        near = suggest(text, [Named(n.title, n.aliases, tuple(h[1] for h in n.headings))
                              for n in self.notes.values()],
                       stemmer=self.vault.config.index.stemmer)
        return f"; did you mean {', '.join(near)}?" if near else ""

    # -- links ---------------------------------------------------------------------------
    def _from_index(self, number: int) -> LinkInfo:
        row = self.source.reader.link_row(number)
        target = row.target
        path = self.paths[target] if isinstance(target, int) else target
        return LinkInfo(self.paths[row.source], row.line, row.col, row.raw, path,
                        row.subpath, row.status, row.embed, row.anchor_found)

    @cached_property
    def _overlay_links(self) -> dict[str, list[LinkInfo]]:
        out: dict[str, list[LinkInfo]] = {}
        away = self.outside  # as in the scope's index: no path, no title, no anchor
        for path in sorted({*self.fresh.changed, *self.fresh.added, *self.fresh.relinked}):
            note = self.fresh.parsed[path]
            out[path] = [LinkInfo(path, r.link.line, r.link.col, r.link.raw, r.target,
                                  r.link.subpath, r.status, r.link.embed, r.anchor_found)
                         if r.target not in away else
                         LinkInfo(path, r.link.line, r.link.col, r.link.raw, None,
                                  r.link.subpath, "out_of_scope", r.link.embed, None)
                         for r in self.link_resolver.resolve_all(note)]
        return out

    def outgoing(self, path: str) -> list[LinkInfo]:
        if path in self._overlay_links:
            return list(self._overlay_links[path])
        first = self.source.reader.ints(OUTGOING_FILE)
        i = self.number[path]
        return [self._from_index(r) for r in range(int(first[i]), int(first[i + 1]))]

    def backlinks(self, path: str) -> list[LinkInfo]:
        out: list[LinkInfo] = []
        redone = set(self._overlay_links) | set(self.fresh.deleted)
        num = self.number.get(path)
        if num is not None and path not in self.fresh.deleted:
            reader = self.source.reader
            ptr, ids = reader.ints(BACKLINKS_FILE), reader.ints(BACKLINK_IDS_FILE)
            for r in ids[int(ptr[num]):int(ptr[num + 1])]:
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
        reader = self.source.reader
        statuses: list[str] = reader.core().link_statuses
        flat = int_table(reader.data(LINKS_FILE))
        width = len(order) + 1  # a pair is coded as one int: source * width + target
        if flat is None or flat[1] != 3:
            raise IndexFormatError(f"{reader.root}: {LINKS_FILE} is not a link array as "
                                   "kbase writes it")
        codes = self._index_pairs(flat[0], statuses, node, redone, width)
        for src_path, out in self._overlay_links.items():
            if src_path not in node:
                continue
            for lk in out:
                if lk.status == "ok" and lk.target in node and lk.target != src_path:
                    codes.add(node[src_path] * width + node[lk.target])
        # Sorting ints and splitting them is ~3x cheaper than sorting 60k tuples.
        return NoteEdges(tuple(order), tuple(divmod(c, width) for c in sorted(codes)))

    def _index_pairs(self, flat: Sequence[int], statuses: list[str], node: dict[str, int],
                     redone: set[str], width: int) -> set[int]:
        """The index's note-to-note links as node pairs, in plain Python: importing numpy
        would cost more (~0.1 s) than the whole loop over 60k links."""
        if "ok" not in statuses:
            return set()
        ok = statuses.index("ok")
        # A note re-read or deleted loses its indexed links (the overlay has the current
        # ones) but stays a target while it exists.
        to_node = [-1 if p in redone else node.get(p, -1) for p in self.paths]
        target_node = [node.get(p, -1) for p in self.paths]
        codes: set[int] = set()
        status = flat[2::3]
        src_col, dst_col = flat[0::3], flat[1::3]
        for i in [i for i, st in enumerate(status) if st == ok]:
            s, d = src_col[i], dst_col[i]
            if d < 0 or s == d:
                continue
            a, b = to_node[s], target_node[d]
            if a >= 0 and b >= 0:
                codes.add(a * width + b)
        return codes
