"""What a commit does to the vault's notes (`NoteChanges`), and the links it breaks.

A rename, a deletion, a removed alias or a removed or renamed heading or block id
breaks links in notes the commit never touched. To find them cheaply, the HEAD
versions of the changed notes are parsed (usually from the parse cache), and only
links whose target *name* could have matched a changed note are looked at: their
lower-cased file stem (or alias) is one of a few keys. Only those candidates are
resolved; a candidate still fine now costs one resolve. When one is not, the link
is resolved again against the vault as it was at HEAD (built once, lazily) to be
sure the commit broke it, and to say how ("`a.md` was renamed to `b.md`").
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from kbase_ci.checks.breakage import Breakage, LinkKey, Reason, name_key
from kbase_ci.checks.swappedstore import overlay
from kbase_ci.parsed import Link, ParsedNote
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.notestore import LinkedNote, NoteStore
from kbase_ci.vault.resolver import ResolvedLink, Resolver


class NoteChanges:
    """What this commit does to the vault's files, with the HEAD versions of changed notes.

    State: the HEAD-state resolver and the breakage found, each built on first use.
    """

    def __init__(self, renames: Mapping[str, str], deleted: Collection[str],
                 added: Collection[str], modified: Collection[str],
                 old_notes: Mapping[str, ParsedNote], *, inbound: bool = True,
                 elsewhere: Collection[str] = (), resolve_aliases: bool = True,
                 include_dot: bool = False, vault: Vault | None = None,
                 old_shas: Mapping[str, str] | None = None,
                 when: str = "in this commit",
                 ambiguous: Mapping[str, tuple[str, ...]] | None = None) -> None:
        """`when`: how causes name the change (`in this commit`, `in this PR`);
        `ambiguous`: notes of identical content renamed together whose new paths cannot
        be told apart (`movepairs`), listed among `deleted`: old path -> new paths."""
        self.renames = dict(renames)
        """Old path -> new path, for every file moved in this commit."""
        self.deleted = frozenset(deleted)
        self.added = frozenset(added)
        self.modified = frozenset(modified)
        self.old_notes = dict(old_notes)
        """HEAD versions of renamed, deleted and modified notes, by HEAD path."""
        self.inbound = inbound
        self.elsewhere = frozenset(elsewhere)
        self.resolve_aliases = resolve_aliases
        self.include_dot = include_dot
        self._moved_from = {new: old for old, new in self.renames.items()}
        self._old_resolver: Resolver | None = None
        self._old_state: tuple[NoteStore, list[str]] | None = None
        self._found: dict[LinkKey, Breakage] | None = None
        # Texts for telling links written in this commit from links that were there.
        self._vault = vault
        self._old_shas = dict(old_shas or {})
        self._fresh: dict[str, frozenset[int] | None] = {}
        self.when = when
        self.ambiguous = dict(ambiguous or {})
        self.scanned: frozenset[str] = frozenset()
        """The notes `breakage` looked at: the focus and the notes linking to what moved."""

    # -- finding breakage ------------------------------------------------------------

    def breakage(self, notes: NoteStore, files: Sequence[str], resolver: Resolver,
                 focus: Collection[str]) -> dict[LinkKey, Breakage]:
        """Broken links in the notes this process reports on: `focus`, plus every other
        note except `elsewhere` when `inbound`. Only notes whose link targets (from the
        store's summaries) name a changed note are decoded."""
        if self._found is None:
            lost, anchor_notes, anchor_keys = self._keys(notes)
            moved = set(self.renames.values())
            known = set(notes.paths)
            wanted = known.intersection(focus)
            if self.inbound and (lost or anchor_notes or moved):
                maybe = {*notes.linking_to(lost | anchor_keys), *anchor_notes, *moved}
                wanted.update(p for p in maybe if p in known and p not in self.elsewhere)
            # A note a published index summarized comes with the index's links, checked
            # against its text, instead of being parsed (kbase_ci.vault.indexhints).
            sources = notes.link_sources(sorted(wanted), lost | anchor_keys)
            self.scanned = frozenset(wanted)
            self._found = {b.key: b for b in self.find(notes, files, resolver, sources)}
        return self._found

    def find(self, notes: NoteStore, files: Sequence[str], resolver: Resolver,
             sources: Iterable[ParsedNote | LinkedNote]) -> list[Breakage]:
        """Broken links among `sources`' links (every candidate is looked at)."""
        lost, anchor_notes, anchor_keys = self._keys(notes)
        moved = set(self.renames.values())
        if not (lost or anchor_notes or moved):
            return []
        out: list[Breakage] = []
        for note in sources:
            path = note.path
            src_moved = path in moved
            src_anchor = path in anchor_notes
            for link in note.links:
                if link.external:
                    continue
                target = link.target
                if target:
                    key = name_key(target)
                    hit = key in lost
                    if not (hit or src_moved or (link.subpath and key in anchor_keys)):
                        continue
                elif not (link.subpath and (src_anchor or src_moved)):
                    continue
                else:
                    hit = False
                b = self._judge(note, link, hit, notes, files, resolver)
                if b is not None:
                    out.append(b)
        return out

    def _keys(self, notes: NoteStore) -> tuple[set[str], set[str], set[str]]:
        """Name keys of files gone from their place (and of removed aliases), notes whose
        headings or block ids changed, and the name keys such notes are linked by."""
        lost: set[str] = set()
        for old in (*self.renames, *self.deleted):
            lost.add(name_key(old))
            gone = self.old_notes.get(old)
            if gone is not None:
                lost.update(name_key(a) for a in gone.aliases)
        anchor_notes: set[str] = set()
        anchor_keys: set[str] = set()
        pairs = [(p, p) for p in self.modified] + list(self.renames.items())
        for old_path, new_path in pairs:
            before, after = self.old_notes.get(old_path), notes.get(new_path)
            if before is None or after is None:
                continue
            kept = {name_key(a) for a in after.aliases}
            lost.update(k for k in (name_key(a) for a in before.aliases) if k not in kept)
            if _anchors(before) != _anchors(after):
                anchor_notes.add(new_path)
                anchor_keys.update({name_key(old_path), name_key(new_path), *kept,
                                    *(name_key(a) for a in before.aliases)})
        return lost, anchor_notes, anchor_keys

    def old_state(self, notes: NoteStore, files: Sequence[str]
                  ) -> tuple[NoteStore, list[str]]:
        """The notes and files as they were at HEAD: changed notes replaced by their old
        versions, added ones gone, moved and deleted ones back (nothing listed again)."""
        if self._old_state is None:
            new_only = set(self.renames.values()) | self.added
            old_files = [f for f in files if f not in new_only]
            old_files += [*self.renames, *self.deleted]
            self._old_state = (overlay(notes, new_only | self.modified, self.old_notes),
                               old_files)
        return self._old_state

    def keeps_targets(self, notes: NoteStore) -> bool:
        """Whether every link resolves now as it did at HEAD: nothing added, moved or
        deleted, and no changed note lost or gained an alias, heading or block id."""
        if self.renames or self.deleted or self.added:
            return False
        for path in self.modified:
            before, after = self.old_notes.get(path), notes.get(path)
            if before is None or after is None:
                if (before is None) != (after is None):
                    return False  # a note that was or became something else (binary)
                continue
            if before.aliases != after.aliases or _anchors(before) != _anchors(after):
                return False
        return True

    def old_resolver(self, notes: NoteStore, files: Sequence[str]) -> Resolver:
        """The vault as it was at HEAD, for resolving links as they were."""
        if self._old_resolver is None:
            store, old_files = self.old_state(notes, files)
            self._old_resolver = Resolver(store, old_files,
                                          resolve_aliases=self.resolve_aliases,
                                          include_dot=self.include_dot)
        return self._old_resolver

    def _judge(self, note: ParsedNote | LinkedNote, link: Link, hit: bool, notes: NoteStore,
               files: Sequence[str], resolver: Resolver) -> Breakage | None:
        now = resolver.resolve(note.path, link)
        fine = now.status == "ok" and now.anchor_found is not False
        moved_source = note.path in self._moved_from
        if fine and not hit and not moved_source:
            return None
        old_source = self._moved_from.get(note.path, note.path)
        before = self.old_resolver(notes, files).resolve(old_source, link)
        if before.status != "ok" or before.target is None:
            return None  # already broken before this commit
        was = before.target
        expected = self.renames.get(was, None if was in self.deleted else was)
        if fine and now.target == expected:
            return None
        if now.status == "ok" and expected is not None and now.target == expected:
            if before.anchor_found is False:
                return None  # the anchor was already missing
            return self._anchor(note, link, was, expected, resolver)
        reason, cause = self._why(was, expected, old_source, note.path, before)
        if now.status == "ok":  # found, but another note than before
            if self._written_now(note.path, old_source, link.line):
                return None  # the author wrote it this way in this very commit
            cause += f", so this link now finds `{now.target}`"
            code = "KB106"
        else:
            code = "KB102" if link.embed else "KB101"
        suggestion = None
        if expected is not None:
            # Lazy: only a broken link needs it (~3 ms to import on the hook path).
            from kbase_ci.vault.rewrite import retarget

            suggestion = retarget(link, note.path, expected, resolver, before.via)
        return Breakage(note.path, link, code, reason, cause, was, expected, suggestion)

    def old_sha(self, path: str) -> str | None:
        """The blob id at HEAD of changed note `path` (its HEAD path)."""
        return self._old_shas.get(path)

    def written_lines(self, path: str) -> frozenset[int] | None:
        """Lines of note `path` this commit added or edited (None: the whole note is new)."""
        if path not in self._fresh:
            # Lazy: only a new-only finding needs it (hook start-up counts modules).
            from kbase_ci.checks.writtenlines import changed_lines

            old_sha = self._old_shas.get(self._moved_from.get(path, path))
            self._fresh[path] = changed_lines(self._vault, path, old_sha,
                                              new=path in self.added)
        return self._fresh[path]

    def _written_now(self, path: str, old_path: str, line: int) -> bool:
        """Whether `line` of note `path` was added or edited in this commit (a line diff
        against the HEAD version)."""
        if path not in self.modified and path not in self.added and \
                path not in self._moved_from:
            return False
        if path not in self._fresh:
            # Lazy: only a link that now finds another note needs it (hook start-up).
            from kbase_ci.checks.writtenlines import changed_lines

            self._fresh[path] = changed_lines(self._vault, path, self._old_shas.get(old_path),
                                              new=path in self.added)
        fresh = self._fresh[path]
        return fresh is None or line in fresh

    def _why(self, was: str, expected: str | None, old_source: str, source: str,
             before: ResolvedLink) -> tuple[Reason, str]:
        if was in self.renames:
            return "renamed", f"`{was}` was renamed to `{expected}` {self.when}"
        if expected is None and was in self.ambiguous:
            went = self.ambiguous[was]
            where = ", ".join(f"`{p}`" for p in went[:5]) + \
                (f" and {len(went) - 5} more" if len(went) > 5 else "")
            return "deleted", (f"`{was}` was renamed {self.when} to one of {where}, notes of "
                               "the same content: which one is ambiguous, so kbase does not "
                               "rewrite this link; fix it by hand")
        if expected is None:
            return "deleted", f"`{was}` was deleted {self.when}"
        if before.via == "alias":
            old = self.old_notes.get(was)
            wanted = name_key(before.link.target)
            alias = next((a for a in (old.aliases if old else ()) if name_key(a) == wanted),
                         before.link.target)
            return "alias-removed", f"alias `{alias}` was removed from `{was}` {self.when}"
        if old_source != source:
            return "moved", f"this note was moved from `{old_source}` {self.when}"
        return "moved", f"`{was}` is no longer found from here after a change {self.when}"

    def _anchor(self, note: ParsedNote | LinkedNote, link: Link, was: str, target: str,
                resolver: Resolver) -> Breakage | None:
        # Lazy: only a link whose anchor a commit removed needs these (hook start-up).
        from kbase_ci.checks.anchorfate import anchor_fate
        from kbase_ci.vault.rewrite import link_for, relink

        old, new = self.old_notes.get(was), resolver.note(target)
        lost = anchor_fate(link, old, new) if old is not None and new is not None else None
        if lost is None:
            return None
        code, what, renamed, new_sub = lost
        where = f"`{target}`"
        if renamed is None:
            return Breakage(note.path, link, code, "anchor-removed",
                            f"{what} was removed from {where} {self.when}", was, target)
        suggestion = relink(link, subpath=new_sub) if new_sub is not None else None
        if suggestion is not None:
            check = resolver.resolve(note.path, link_for(link, suggestion))
            if check.target != target or check.anchor_found is not True:
                suggestion = None
        return Breakage(note.path, link, code, "anchor-renamed",
                        f"{what} was renamed to `{renamed}` in {where} {self.when}", was,
                        target, suggestion)


def _anchors(note: ParsedNote) -> tuple[tuple[tuple[int, str, tuple[str, ...]], ...],
                                         tuple[str, ...]]:
    return (tuple((h.level, h.text, h.parents) for h in note.headings),
            tuple(b.id for b in note.block_ids))
