"""What every check sees: the whole vault for resolution, the focus for reporting."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Sequence
from functools import cached_property

from ..config import Config
from ..model import ParsedNote
from ..resolver import ResolvedLink, Resolver


class CheckContext:
    """State: the resolver and resolved links, built once and shared by all checks."""

    def __init__(self, notes: Sequence[ParsedNote], files: Sequence[str], config: Config,
                 focus: Collection[str] | None = None) -> None:
        self.notes = list(notes)
        self.files = list(files)
        self.config = config
        self.by_path = {n.path: n for n in self.notes}
        self.focus = frozenset(self.by_path) if focus is None else frozenset(focus)
        self._resolved: dict[str, list[ResolvedLink]] = {}

    @property
    def focus_notes(self) -> list[ParsedNote]:
        return [n for n in self.notes if n.path in self.focus]

    @cached_property
    def resolver(self) -> Resolver:
        return Resolver(self.notes, self.files,
                        resolve_aliases=self.config.links.resolve_aliases)

    def resolved(self, note: ParsedNote) -> list[ResolvedLink]:
        got = self._resolved.get(note.path)
        if got is None:
            got = self.resolver.resolve_all(note)
            self._resolved[note.path] = got
        return got

    @cached_property
    def _names(self) -> dict[str, str]:
        """Lower-cased note names and aliases -> the link text to suggest."""
        names: dict[str, str] = {}
        for n in self.notes:
            names.setdefault(n.title.lower(), n.title)
            for a in n.aliases:
                names.setdefault(a.lower(), a)
        return names

    def suggest(self, wanted: str, choices: Collection[str] | None = None) -> str | None:
        """Nearest known name (note title or alias, or one of `choices`) to `wanted`."""
        pool = {c.lower(): c for c in choices} if choices is not None else self._names
        stem = wanted.rsplit("/", 1)[-1]
        if stem.lower().endswith(".md"):
            stem = stem[:-3]
        hit = difflib.get_close_matches(stem.lower(), list(pool), n=1, cutoff=0.6)
        return pool[hit[0]] if hit else None
