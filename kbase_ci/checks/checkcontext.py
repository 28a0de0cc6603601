"""What every check sees: the whole vault for resolution, the focus for reporting."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from kbase_ci.checks.breakage import Breakage, LinkKey
from kbase_ci.checks.notechanges import NoteChanges
from kbase_ci.checks.suggestions import Suggester
from kbase_ci.errors import UsageError
from kbase_ci.git.objects import read_blobs
from kbase_ci.parse.outline import note_text
from kbase_ci.parsed import ParsedNote
from kbase_ci.vault.config import Config
from kbase_ci.vault.notestore import NoteStore
from kbase_ci.vault.resolver import ResolvedLink, Resolver
from kbase_ci.vault.yamlconfig import close_matches

if TYPE_CHECKING:
    from kbase_ci.checks.policy import Policy
    from kbase_ci.vault.notefiles import Vault


class CheckContext:
    """State: the resolver and resolved links, built once and shared by all checks."""

    def __init__(self, notes: Sequence[ParsedNote], files: Sequence[str], config: Config,
                 focus: Collection[str] | None = None, *, vault: Vault | None = None,
                 change: NoteChanges | None = None) -> None:
        # A NoteStore decodes cached records on demand; a plain list is wrapped in one.
        self.store = notes if isinstance(notes, NoteStore) else NoteStore.from_notes(notes)
        self.vault = vault
        """Where note text comes from (`text`); None for contexts built from records only."""
        self.files = list(files)
        self.config = config
        self.by_path = _ByPath(self.store)
        self.focus = frozenset(self.store.paths) if focus is None else frozenset(focus)
        self.whole = focus is None
        """The whole vault is checked (no paths named, not a hook's share)."""
        self._resolved: dict[str, list[ResolvedLink]] = {}
        self._texts: dict[str, str] = {}
        self._blobs: dict[str, str] = {}
        self.change = change
        """What this commit changes (hook mode); None when checking a tree as it is."""
        self.policy: Policy | None = None
        """Severity and suppression rules of `config` (`registry.policy_of` sets it)."""

    @property
    def notes(self) -> list[ParsedNote]:
        """Every note, fully decoded (slow on big vaults: prefer `store` summaries)."""
        return self.store.all()

    @property
    def focus_notes(self) -> list[ParsedNote]:
        return self.store.load(self._focus_paths)

    @cached_property
    def _focus_paths(self) -> list[str]:
        # Every check asks; walking all 10k paths each time cost a hook ~1 ms a check.
        # Sorted like `store.paths`; `load` skips paths the store does not have.
        return sorted(self.focus)

    def text(self, path: str) -> str:
        """The text of note `path` as the parser saw it (index blob in staged mode).

        The first call reads every focus note in one `git cat-file` process: checks ask
        for texts note by note, and one process per note costs seconds on a big vault.
        """

        vault = self.vault
        if path not in self._texts and path in self._blobs and vault is not None:
            sha = self._blobs[path]
            self._texts[path] = note_text(read_blobs(vault.root, [sha])[sha])
        if path in self._texts:
            return self._texts[path]
        nf = vault.note(path) if vault is not None else None
        if vault is None or nf is None:
            raise UsageError(f"no text for {path}: the check context has no vault")
        if path not in self._texts:
            batch = [n for p in sorted(self.focus | {path})
                     if p not in self._texts and p not in self._blobs
                     and (n := vault.note(p)) is not None]
            for p, data in vault.read(batch).items():
                self._texts[p] = note_text(data)
        return self._texts[path]

    def known_blobs(self, blobs: Mapping[str, str]) -> None:
        """Blob ids of notes whose text here is not what `vault` holds (the HEAD versions
        of notes a commit changed, in a context of the vault as it was)."""
        self._blobs.update(blobs)

    @cached_property
    def resolver(self) -> Resolver:
        return Resolver(self.store, self.files,
                        resolve_aliases=self.config.links.resolve_aliases,
                        include_dot=self.config.vault.include_dot_folders)

    @cached_property
    def breakage(self) -> dict[LinkKey, Breakage]:
        """Links this commit breaks, in the notes this process reports on."""
        if self.change is None:
            return {}
        return self.change.breakage(self.store, self.files, self.resolver, self.focus)

    @property
    def checked(self) -> frozenset[str]:
        """The notes reported on: the focus, and the notes read for links this commit
        breaks (after a deletion those may be the only ones)."""
        if self.change is None or "breakage" not in self.__dict__:
            return self.focus
        return self.focus | self.change.scanned

    def resolved(self, note: ParsedNote) -> list[ResolvedLink]:
        got = self._resolved.get(note.path)
        if got is None:
            got = self.resolver.resolve_all(note)
            self._resolved[note.path] = got
        return got

    @cached_property
    def suggester(self) -> Suggester:
        """Confident "did you mean" for broken links, headings and block ids."""
        return Suggester(self.resolver, self.store.paths)


def nearest(wanted: str, choices: Collection[str]) -> str | None:
    """The choice closest to `wanted` (case-insensitive), or None below 60% similarity:
    for short closed lists (tag vocabularies, allowed values), not note names."""
    pool = {c.lower(): c for c in choices}
    hit = _closest(wanted.lower(), list(pool))
    return pool[hit] if hit is not None else None


def _closest(wanted: str, keys: list[str]) -> str | None:
    hit = close_matches(wanted, keys)
    return hit[0] if hit else None


class _ByPath(Mapping[str, ParsedNote]):
    """`path -> ParsedNote` over a NoteStore, decoding only the notes looked up."""

    def __init__(self, store: NoteStore) -> None:
        self._store = store

    def __getitem__(self, path: str) -> ParsedNote:
        note = self._store.get(path)
        if note is None:
            raise KeyError(path)
        return note

    def __contains__(self, path: object) -> bool:
        return path in self._store

    def __iter__(self) -> Iterator[str]:
        return iter(self._store.paths)

    def __len__(self) -> int:
        return len(self._store.paths)
