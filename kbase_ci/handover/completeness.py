"""Completeness of one typed note against its type: fields, sections, rules.

`Assessor` holds what judging a note needs from the rest of the vault (its notes and
files, link resolution, the deletions of a change, the PR diff); `assess` has an
`assessment.NoteAssessment` walk the note's type part by part and hand each result to a
`scoring.Tally`, so the 0-100 score and the list of missing items are one computation.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence

from kbase_ci.handover.assessment import NoteAssessment
from kbase_ci.handover.scoring import Missing, NoteScore
from kbase_ci.handover.sectionitems import path_matches
from kbase_ci.parsed import ParsedNote
from kbase_ci.vault.notetypes import NoteType, NoteTypes
from kbase_ci.vault.resolver import Resolver

__all__ = ["Assessor", "Missing", "NoteScore"]


class Assessor:
    """Scores typed notes of one vault. State: the notes, files and the lazily-read
    deletions of each note's change.

    `deleted(note_path)` gives the paths deleted in the change that wrote the note (only
    asked when a listed path does not exist); `diff`, in PR mode, is every path the PR
    touched, which each listed path must be part of.
    """

    def __init__(self, notes: Mapping[str, ParsedNote] | Sequence[ParsedNote],
                 files: Collection[str], types: NoteTypes, resolver: Resolver, *,
                 deleted: Callable[[str], Collection[str]] | None = None,
                 diff: Collection[str] | None = None) -> None:
        # A mapping may decode notes lazily (the hook's NoteStore): only link targets and,
        # for open questions, the answers are ever looked up.
        self.notes: Mapping[str, ParsedNote] = (
            notes if isinstance(notes, Mapping) else {n.path: n for n in notes})
        self.files = frozenset(files)
        self.dirs = frozenset(p.rsplit("/", i)[0] for p in self.files
                              for i in range(1, p.count("/") + 1))
        self.types = types
        self.resolver = resolver
        self._deleted = deleted
        self._deleted_cache: dict[str, frozenset[str]] = {}
        self.diff = None if diff is None else frozenset(diff)
        self._type_cache: dict[str, NoteType | None] = {}
        self._answered: frozenset[str] | None = None

    def type_of(self, path: str) -> NoteType | None:
        if path not in self._type_cache:
            note = self.notes.get(path)
            self._type_cache[path] = self.types.type_of(note) if note else None
        return self._type_cache[path]

    # -- whole-vault relations ---------------------------------------------------------
    def answered(self) -> frozenset[str]:
        """Questions some answer links (in a field or in its text)."""
        if self._answered is not None:
            return self._answered
        out: set[str] = set()
        for path, note in self.notes.items():
            t = self.type_of(path)
            if t is None or t.name != "answer":
                continue
            for link in note.links:
                r = self.resolver.resolve(path, link)
                if r.target and self.is_type(r.target, "question"):
                    out.add(r.target)
        self._answered = frozenset(out)
        return self._answered

    def open_questions(self) -> list[str]:
        answered = self.answered()
        return sorted(p for p in self.notes
                      if self.is_type(p, "question") and p not in answered)

    def is_type(self, path: str, type_name: str) -> bool:
        t = self.type_of(path)
        return t is not None and t.name == type_name

    # -- one note ----------------------------------------------------------------------
    def assess(self, note: ParsedNote, text: str, ntype: NoteType | None = None
               ) -> NoteScore | None:
        t = ntype or self.type_of(note.path) or self.types.type_of(note)
        if t is None:
            return None
        return NoteAssessment(self, note, text, t).run()

    def deleted_for(self, path: str) -> frozenset[str]:
        if path not in self._deleted_cache:
            got = self._deleted(path) if self._deleted is not None else ()
            self._deleted_cache[path] = frozenset(got)
        return self._deleted_cache[path]

    def exists(self, path: str) -> bool:
        p = path.rstrip("/")
        if p in self.files or p in self.dirs:
            return True
        return any(c in p for c in "*?[") and any(path_matches(p, f) for f in self.files)
