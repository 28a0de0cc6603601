"""What a `Link` points at: Obsidian's resolution rules over one vault.

The rules, in the order they are applied, with an example each, are in
docs/resolution.md; fixtures/resolution/cases.txt pins every one of them. All
name maps are built once in `Resolver.__init__`, so resolving a link costs a few
dict lookups (a 10k-note vault has ~60k links and is re-resolved on every commit).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from kbase_ci.parse.anchors import HeadingIndex, find_block
from kbase_ci.parsed import Link, ParsedNote
from kbase_ci.vault.linkrules import (
    Hit,
    Status,
    clamp_join,
    ends_with_path,
    has_extension,
    index_by,
    many,
    match_key,
    obsidian_order,
    strip_md,
)
from kbase_ci.vault.notefiles import is_hidden
from kbase_ci.vault.notestore import NoteStore


@dataclass(frozen=True, slots=True)
class ResolvedLink:
    """A link and what it points at in the vault."""

    source: str
    """Repository-relative path of the note holding the link."""
    link: Link
    target: str | None
    """Resolved repository-relative path; None when unresolved, external or escaping."""
    status: Status
    anchor_found: bool | None
    """None when the link has no anchor, or the target is unresolved or not a note."""
    candidates: tuple[str, ...] = ()
    """Every match, sorted, when more than one file matched; () otherwise."""
    via: str | None = None
    """Rule that matched: self, path, relative, suffix, basename, alias, attachment."""

    @property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1



class Resolver:
    """Resolves links of one vault. Build once per vault; `resolve` is then O(1) per link."""

    def __init__(self, notes: Sequence[ParsedNote] | NoteStore, files: Sequence[str] = (), *,
                 resolve_aliases: bool = True, include_dot: bool = False) -> None:
        """`files`: every tracked file (notes may be among them); `include_dot`:
        `vault.include_dot_folders`, whether files under a `.` name are link targets."""
        # A NoteStore gives names and aliases without decoding every note; full records
        # (for headings and block ids) are loaded only for notes that links point at.
        self._store = notes if isinstance(notes, NoteStore) else NoteStore.from_notes(notes)
        self._files = files
        self._resolve_aliases = resolve_aliases
        self._include_dot = include_dot
        self._memo: dict[tuple[bool, str, str], Hit | Status] = {}
        self._headings: dict[str, HeadingIndex] = {}
        self._anchors: dict[tuple[str, bool, str], bool | None] = {}

    # Name maps are built on first use: a hook checking one note whose links are bare
    # names needs the name map, not the path, attachment or alias maps (~10 ms at 10k).
    @cached_property
    def _path_keys(self) -> list[str]:
        # A note path always ends in `.md` (any case).
        return [p.lower() if p.isascii() else match_key(p) for p in self._store.paths]

    @cached_property
    def _note_names(self) -> dict[str, list[str]]:
        paths = self._store.paths
        return index_by(paths, [k[k.rfind("/") + 1:-3] if k.isascii() else
                              match_key(strip_md(p.rpartition("/")[2]))
                              for p, k in zip(paths, self._path_keys, strict=True)])

    @cached_property
    def _attachments(self) -> list[str]:
        # `files` may repeat the notes; a `.md` file is only ever a note. Hidden files are
        # not in an Obsidian vault (rule 5).
        return sorted({f for f in self._files if not f.lower().endswith(".md")
                       and (self._include_dot or not is_hidden(f))})

    @cached_property
    def _file_names(self) -> dict[str, list[str]]:
        return index_by(self._attachments,
                      [match_key(f.rpartition("/")[2]) for f in self._attachments])

    @cached_property
    def _alias_maps(self) -> tuple[dict[str, list[str]], dict[str, str]]:
        """(alias key -> notes holding it, alias key -> its first spelling)."""
        aliases_of = self._store.aliases()
        holders_of: dict[str, list[str]] = {}
        spelling: dict[str, str] = {}
        # In note order (the first spelling wins), visiting only notes with aliases.
        for path in [p for p in self._store.paths if p in aliases_of]:
            for alias in aliases_of[path]:
                key = match_key(alias.strip())
                if not key:
                    continue
                holders = holders_of.setdefault(key, [])
                if path not in holders:
                    holders.append(path)
                spelling.setdefault(key, alias.strip())
        return holders_of, spelling

    @property
    def _aliases(self) -> dict[str, list[str]]:
        return self._alias_maps[0]

    # -- public API -----------------------------------------------------------------

    @property
    def attachments(self) -> list[str]:
        """The files other than notes that links can reach (hidden ones left out)."""
        return self._attachments

    @property
    def notes(self) -> tuple[ParsedNote, ...]:
        return tuple(self._store.all())

    def note(self, path: str) -> ParsedNote | None:
        return self._store.get(path)

    def resolve(self, source: str, link: Link) -> ResolvedLink:
        if link.external:
            return ResolvedLink(source, link, None, "external", None)
        if not link.target:
            anchor = self._anchor(source, link) if link.subpath else None
            return ResolvedLink(source, link, source, "ok", anchor, (), "self")
        wiki = link.style == "wiki"
        folder = source.rpartition("/")[0]
        raw = link.target
        if "/" not in raw and raw not in (".", ".."):
            hit: Hit | Status = self._bare(raw, folder, wiki) or "unresolved"
        else:
            # Paths take several steps; the answer depends only on (style, target, folder).
            memo_key = (wiki, raw, folder)
            hit = self._memo.get(memo_key) or self._memo.setdefault(
                memo_key, self._locate(raw, folder, wiki))
        if isinstance(hit, str):
            return ResolvedLink(source, link, None, hit, None)
        target, via, candidates = hit
        anchor = self._anchor(target, link) if link.subpath else None
        return ResolvedLink(source, link, target, "ok", anchor, candidates, via)

    def resolve_all(self, note: ParsedNote) -> list[ResolvedLink]:
        return [self.resolve(note.path, link) for link in note.links]

    def lookup(self, name: str, source: str = "") -> ResolvedLink:
        """Resolve a bare name, alias or path as if `source` contained `[[name]]`."""
        text = name.strip()
        target, _, subpath = text.partition("#")
        link = Link("wiki", False, f"[[{text}]]", target.strip(), subpath.strip(), None, 1, 1)
        if not link.target and not source:
            return ResolvedLink(source, link, None, "unresolved", None)
        return self.resolve(source, link)

    def alias_collisions(self, among: Iterable[str] | None = None
                         ) -> list[tuple[str, tuple[str, ...]]]:
        """Aliases that are also another note's name or alias, with every note claiming
        them; only those spelled like one of `among` when given (a hook asks about the
        staged notes' aliases, not the thousands of the vault)."""
        out: list[tuple[str, tuple[str, ...]]] = []
        keys = self._aliases if among is None else {
            k for k in (match_key(a.strip()) for a in among) if k in self._aliases}
        for key in sorted(keys):
            owners = set(self._aliases[key]) | set(self._note_names.get(key, ()))
            if len(owners) > 1:
                out.append((self._alias_maps[1][key], tuple(sorted(owners))))
        return out

    # -- rules ----------------------------------------------------------------------

    def _locate(self, raw: str, folder: str, wiki: bool) -> Hit | Status:
        """A target with a `/` (or `.`, `..`): the path it names, then the files it finds.

        A path is a vault path, wikilink or Markdown link alike (Obsidian looks both up
        vault-wide); a leading `./` or `../` makes it relative to the linking note.
        """
        rooted = raw.startswith("/")
        rel = raw.lstrip("/")
        explicit = not rooted and (rel in (".", "..") or rel.startswith(("./", "../")))
        path, climbed = clamp_join(folder if explicit else "", rel)
        hit = self._find(path, folder, wiki, explicit=explicit, bare="/" not in path) \
            if path else None
        if hit is None and wiki and not explicit and self._resolve_aliases:
            hit = self._alias(match_key(rel.strip()), folder)  # an alias may hold `/` (`CI/CD`)
        if hit is not None:
            return hit
        # Obsidian stops at the vault root, so nothing outside is ever read; a link that
        # climbed there and still found nothing is reported as climbing out (KB104).
        return "escapes" if climbed else "unresolved"

    def _bare(self, name: str, folder: str, wiki: bool) -> Hit | None:
        """A name without folders, the common case: one dict hit, a sort only when the
        name is shared."""
        key = name.lower() if name.isascii() else match_key(name)
        hits = self._note_names.get(key[:-3] if key.endswith(".md") else key)
        if hits is not None and len(hits) == 1:  # the usual case: a unique name
            home = hits[0].rpartition("/")[0]
            return Hit(hits[0], "path" if not home else
                        "relative" if home == folder else "basename")
        hit = self._find(name, folder, wiki, explicit=False, bare=True)
        if hit is None and wiki and self._resolve_aliases:
            return self._alias(key, folder)
        return hit

    def _find(self, path: str, folder: str, wiki: bool, *, explicit: bool,
              bare: bool) -> Hit | None:
        """Notes, then other files, named by vault path `path`: the exact path, else
        every file whose path ends with it (rule 7) in Obsidian's order (rule 6)."""
        name = path.rpartition("/")[2]
        key = match_key(name)
        md = key.endswith(".md")
        hit = self._among(self._note_names.get(key[:-3] if md else key), path,
                          path if md else path + ".md", folder, wiki, explicit=explicit,
                          bare=bare, attachment=False)
        if hit is None and has_extension(name):
            hit = self._among(self._file_names.get(key), path, path, folder, wiki,
                              explicit=explicit, bare=bare, attachment=True)
        return hit

    @staticmethod
    def _among(named: list[str] | None, path: str, full: str, folder: str, wiki: bool, *,
               explicit: bool, bare: bool, attachment: bool) -> Hit | None:
        """Pick from the files `named` like the link (same file name) the one `full`, the
        written vault path with its extension, means; and say which rule found it."""
        if not named:
            return None
        want = match_key(full)
        found = named if bare else [p for p in named if ends_with_path(match_key(p), want)]
        if not found:
            return None
        exact = [p for p in found if match_key(p) == want]
        if exact:
            # Case-only duplicates can both be tracked by git; the exact spelling wins.
            best = full if full in exact else exact[0]
            via = "relative" if explicit else "path"
        else:
            best = min(found, key=obsidian_order(folder))
            # `full` of an explicit `./x` is joined with the folder already.
            beside = not explicit and \
                match_key(best) == match_key(f"{folder}/{full}" if folder else full)
            via = "relative" if beside else "basename" if bare else "suffix"
        if attachment:
            via = "attachment"
        # Obsidian writes a bare wikilink only when the name is unique, so a shared bare
        # name is ambiguous whichever copy won; a path names one file, and a Markdown
        # link that hit the file beside its note means that one (GitHub reads it so).
        if bare and wiki:
            return Hit(best, via, many(named))
        if exact:
            return Hit(best, via, many(exact))
        if via == "relative" and not wiki:
            return Hit(best, via)
        return Hit(best, via, many(found))

    def _alias(self, key: str, folder: str) -> Hit | None:
        holders = self._aliases.get(key)
        if not holders:
            return None
        best = holders[0] if len(holders) == 1 else min(holders, key=obsidian_order(folder))
        return Hit(best, "alias", many(holders))

    def _anchor(self, target: str, link: Link) -> bool | None:
        subpath = link.subpath
        if not subpath:
            return None
        key = (target, link.style == "markdown", subpath)
        if key in self._anchors:
            return self._anchors[key]
        found = self._anchors[key] = self._check_anchor(target, key[1], subpath)
        return found

    def _check_anchor(self, target: str, markdown: bool, subpath: str) -> bool | None:
        note = self._store.get(target)
        if note is None:
            return None
        if subpath.startswith("^"):
            return find_block(note.block_ids, subpath[1:]) is not None
        parts = [p for p in subpath.split("#") if p.strip()]
        if not parts:
            return None
        index = self._headings.get(target)
        if index is None:
            index = self._headings[target] = HeadingIndex(note.headings)
        return index.find(parts, markdown=markdown) is not None

