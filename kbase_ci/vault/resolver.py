"""What a `Link` points at: Obsidian's resolution rules over one vault.

The rules, in the order they are applied, with an example each, are in
docs/resolution.md; fixtures/resolution/cases.txt pins every one of them. All
name maps are built once in `Resolver.__init__`, so resolving a link costs a few
dict lookups (a 10k-note vault has ~60k links and is re-resolved on every commit).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, NamedTuple

from kbase_ci.model import Link, ParsedNote
from kbase_ci.parse.anchors import HeadingIndex, find_block
from kbase_ci.vault.notestore import NoteStore

Status = Literal["ok", "unresolved", "external", "escapes"]


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


def _key(text: str) -> str:
    # NFC because macOS writes decomposed file names while links are typed composed.
    # ASCII text is already NFC; skipping normalize() halves index building on 10k notes.
    return text.lower() if text.isascii() else unicodedata.normalize("NFC", text).lower()


def _strip_md(name: str) -> str:
    return name[:-3] if name.lower().endswith(".md") else name


def _has_extension(target: str) -> bool:
    stem, dot, ext = target.rpartition("/")[2].rpartition(".")
    return bool(dot and stem and ext) and ext.lower() != "md"


def _join(folder: str, rel: str) -> str | None:
    """`folder/rel` with `.` and `..` applied; None when it climbs above the vault root."""
    parts = folder.split("/") if folder else []
    for seg in rel.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(seg)
    return "/".join(parts)


def _index(paths: Sequence[str], key_of: Sequence[str] | None = None) -> dict[str, list[str]]:
    """key -> paths with that key, each list sorted (`paths` must come sorted)."""
    out: dict[str, list[str]] = {}
    keys = key_of if key_of is not None else [_key(p) for p in paths]
    for key, path in zip(keys, paths, strict=True):
        hits = out.get(key)
        if hits is None:
            out[key] = [path]
        else:
            hits.append(path)
    return out


class _Hit(NamedTuple):  # a tuple: built once per link, so it must be cheap
    target: str
    via: str
    candidates: tuple[str, ...] = ()


class Resolver:
    """Resolves links of one vault. Build once per vault; `resolve` is then O(1) per link."""

    def __init__(self, notes: Sequence[ParsedNote] | NoteStore, files: Sequence[str] = (), *,
                 resolve_aliases: bool = True) -> None:
        # A NoteStore gives names and aliases without decoding every note; full records
        # (for headings and block ids) are loaded only for notes that links point at.
        self._store = notes if isinstance(notes, NoteStore) else NoteStore.from_notes(notes)
        self._files = files
        self._resolve_aliases = resolve_aliases
        self._memo: dict[tuple[bool, str, str], _Hit | Status] = {}
        self._headings: dict[str, HeadingIndex] = {}
        self._anchors: dict[tuple[str, bool, str], bool | None] = {}

    # Name maps are built on first use: a hook checking one note whose links are bare
    # names needs the name map, not the path, attachment or alias maps (~10 ms at 10k).
    @cached_property
    def _path_keys(self) -> list[str]:
        # A note path always ends in `.md` (any case).
        return [p.lower() if p.isascii() else _key(p) for p in self._store.paths]

    @cached_property
    def _note_paths(self) -> dict[str, list[str]]:
        return _index(self._store.paths, self._path_keys)

    @cached_property
    def _note_names(self) -> dict[str, list[str]]:
        paths = self._store.paths
        return _index(paths, [k[k.rfind("/") + 1:-3] if k.isascii() else
                              _key(_strip_md(p.rpartition("/")[2]))
                              for p, k in zip(paths, self._path_keys, strict=True)])

    @cached_property
    def _attachments(self) -> list[str]:
        # `files` may repeat the notes; a `.md` file is only ever a note.
        return sorted({f for f in self._files if not f.lower().endswith(".md")})

    @cached_property
    def _file_paths(self) -> dict[str, list[str]]:
        return _index(self._attachments)

    @cached_property
    def _file_names(self) -> dict[str, list[str]]:
        return _index(self._attachments,
                      [_key(f.rpartition("/")[2]) for f in self._attachments])

    @cached_property
    def _alias_maps(self) -> tuple[dict[str, list[str]], dict[str, str]]:
        """(alias key -> notes holding it, alias key -> its first spelling)."""
        aliases_of = self._store.aliases()
        holders_of: dict[str, list[str]] = {}
        spelling: dict[str, str] = {}
        # In note order (the first spelling wins), visiting only notes with aliases.
        for path in [p for p in self._store.paths if p in aliases_of]:
            for alias in aliases_of[path]:
                key = _key(alias.strip())
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
            hit: _Hit | Status = self._bare(raw, folder, wiki) or "unresolved"
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
            k for k in (_key(a.strip()) for a in among) if k in self._aliases}
        for key in sorted(keys):
            owners = set(self._aliases[key]) | set(self._note_names.get(key, ()))
            if len(owners) > 1:
                out.append((self._alias_maps[1][key], tuple(sorted(owners))))
        return out

    # -- rules ----------------------------------------------------------------------

    def _locate(self, raw: str, folder: str, wiki: bool) -> _Hit | Status:
        """A target with a `/` (or `.`, `..`): rules 3 to 7 step by step."""
        rooted = raw.startswith("/")
        rel = raw.lstrip("/")
        explicit = not rooted and (rel in (".", "..") or rel.startswith(("./", "../")))
        # Wikilinks are vault paths; Markdown links are URLs relative to the note.
        primary = _join(folder if explicit or not (wiki or rooted) else "", rel)
        if primary is None:
            # Obsidian falls back to the file name when a path climbs above the vault
            # (docs written for a site generator do this); only a name found nowhere
            # in the vault is reported as escaping, and nothing outside is ever read.
            name = rel.rpartition("/")[2]
            fallback = self._bare(name, folder, wiki) if name not in ("", ".", "..") else None
            return fallback if fallback is not None else "escapes"
        if not primary:
            return "unresolved"
        if rooted or explicit:
            steps = [("path" if rooted else "relative", primary)]
            return self._pathed(steps, primary, folder, wiki=wiki, loose=False) or "unresolved"
        named = _join("", rel) or ""
        if named and "/" not in named:  # `a/../Note` is a bare name after all
            return self._bare(named, folder, wiki) or "unresolved"
        if wiki:
            steps = [("path", primary), ("relative", _join(folder, rel) or "")]
        else:
            steps = [("relative", primary), ("path", named)]
        # A Markdown path that only exists relative to the note (`a/../../x`) has no
        # vault-wide spelling to match names against.
        loose = bool(named)
        return self._pathed(steps, named or primary, folder, wiki=wiki, loose=loose) or "unresolved"

    def _bare(self, name: str, folder: str, wiki: bool) -> _Hit | None:
        """A name without folders: rules 4 (path, relative, basename), 5, 6 and 7 at once.

        For a bare name the path step can only find a root note and the relative step
        only a note beside the source, so all three steps are one dict hit plus a sort.
        """
        key = name.lower() if name.isascii() else _key(name)
        md = key.endswith(".md")
        hits = self._note_names.get(key[:-3] if md else key)
        if hits:
            if len(hits) == 1:  # the usual case: a unique name
                home = hits[0].rpartition("/")[0]
                return _Hit(hits[0], _step(home, folder, wiki))
            return _choose(hits, folder, name[:-3] if md else name, wiki=wiki, attachment=False)
        if _has_extension(name):
            hits = self._file_names.get(key)
            if hits:
                return _choose(hits, folder, name, wiki=wiki, attachment=True)
        if wiki and self._resolve_aliases:
            return self._alias(key, folder)
        return None

    def _alias(self, key: str, folder: str) -> _Hit | None:
        holders = self._aliases.get(key)
        if not holders:
            return None
        return _Hit(_pick(holders, folder), "alias", _many(holders))

    def _pathed(self, steps: list[tuple[str, str]], named: str, folder: str, *, wiki: bool,
                loose: bool) -> _Hit | None:
        """Notes by path steps then path suffix; attachments likewise; then aliases."""
        for via, path in steps:
            hit = self._at(self._note_paths, path, via, notes=True)
            if hit is not None:
                return hit
        stem = _key(_strip_md(named.rpartition("/")[2]))
        if loose:
            hit = self._suffix(self._note_names.get(stem), _strip_md(named), folder, "suffix")
            if hit is not None:
                return hit
        if _has_extension(named):
            for _via, path in steps:
                hit = self._at(self._file_paths, path, "attachment", notes=False)
                if hit is not None:
                    return hit
            if loose:
                hits = self._file_names.get(_key(named.rpartition("/")[2]))
                hit = self._suffix(hits, named, folder, "attachment")
                if hit is not None:
                    return hit
        if wiki and loose and self._resolve_aliases:
            return self._alias(_key(named), folder)  # an alias may contain `/` (`CI/CD`)
        return None

    @staticmethod
    def _at(index: dict[str, list[str]], path: str, via: str, *, notes: bool) -> _Hit | None:
        if not path:
            return None
        key = _key(path)
        if notes and not key.endswith(".md"):
            key += ".md"
            path += ".md"
        hits = index.get(key)
        if not hits:
            return None
        # Case-only duplicates can both be tracked by git; the exact spelling wins.
        return _Hit(path if path in hits else hits[0], via, _many(hits))

    @staticmethod
    def _suffix(hits: list[str] | None, written: str, folder: str, via: str) -> _Hit | None:
        """Files whose path ends with the whole written path: `sub/Note` -> `a/sub/Note.md`."""
        if not hits:
            return None
        tail = "/" + _key(written)
        found = [h for h in hits if ("/" + _key(_strip_md(h) if via == "suffix" else h))
                 .endswith(tail)]
        if not found:
            return None
        return _Hit(_pick(found, folder), via, _many(found))

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


def _many(hits: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(hits)) if len(hits) > 1 else ()


def _pick(hits: Sequence[str], folder: str) -> str:
    """Rule 5 among same-name files: the source's folder, fewest segments, then path."""
    if len(hits) == 1:
        return hits[0]
    return min(hits, key=lambda p: (p.rpartition("/")[0] != folder, p.count("/"), p))


def _step(home: str, folder: str, wiki: bool) -> str:
    """Which rule-4 step finds a bare name living in `home`, linked from `folder`."""
    if home == folder and (home or not wiki):
        return "relative"
    return "path" if home == "" else "basename"


def _choose(hits: list[str], folder: str, spelled: str, *, wiki: bool,
            attachment: bool) -> _Hit:
    """Pick among the files named like a bare link, in rule order, and say which rule won.

    Wikilinks try the vault root before the source folder; Markdown links the source
    folder before the root. Among several, the exact spelling beats a case variant.
    """
    def rank(p: str) -> tuple[bool, bool, int, bool, str]:
        home, _, name = p.rpartition("/")
        first, second = (home != "", home != folder) if wiki else (home != folder, home != "")
        return first, second, p.count("/"), (name if attachment else _strip_md(name)) != spelled, p

    best = hits[0] if len(hits) == 1 else min(hits, key=rank)
    home = best.rpartition("/")[0]
    step = _step(home, folder, wiki)
    via = "attachment" if attachment else step
    if len(hits) == 1:
        return _Hit(best, via)
    # Obsidian writes a bare wikilink only when the name is unique, so a shared name is
    # ambiguous whichever copy won; a Markdown path that hit a folder means that folder.
    if wiki or step == "basename":
        return _Hit(best, via, _many(hits))
    return _Hit(best, via, _many([h for h in hits if h.rpartition("/")[0] == home]))
