"""Handovers across a vault: score typed notes, report a PR's handover, find the latest.

The library behind `kbase handover check`, `kbase handover latest`, the `handover`
check and the handover section of the PR report. Notes are read the way the rest of
kbase reads them (tracked files, the git index in staged mode); a note named on the
command line that is not tracked yet (a fresh `kbase new` skeleton) is read from disk.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from kbase_ci.errors import GitError, UsageError
from kbase_ci.git import history
from kbase_ci.git.diff import changes_between
from kbase_ci.git.repo import head_commit, rev_commit
from kbase_ci.handover.completeness import Assessor
from kbase_ci.handover.scoring import Missing, NoteScore
from kbase_ci.handover.sectionitems import path_matches, section_items
from kbase_ci.parse.outline import note_text
from kbase_ci.parse.parser import parse_note
from kbase_ci.state.bounded import read_input
from kbase_ci.typedjson import Record
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.notetypes import SectionSpec
from kbase_ci.vault.resolver import Resolver
from kbase_ci.vault.scanner import scan

JSON_VERSION = 1


class Question(Record):
    path: str
    title: str
    question: str
    """First line of its Question section ("" when it has none)."""
    urgency: str | None


class OrphanAnswer(Record):
    """An answer whose question does not exist: its KB409 items say which."""

    path: str
    missing: tuple[Missing, ...]


class HandoverReport(Record, json=("version", "threshold", "notes", "open_questions",
                                   "orphan_answers", "untyped")):
    notes: tuple[NoteScore, ...]
    """Each with `passed` set."""
    threshold: int
    open_questions: tuple[Question, ...] = ()
    orphan_answers: tuple[OrphanAnswer, ...] = ()
    untyped: tuple[str, ...] = ()
    """Notes named on the command line that match no note type."""
    version: int = JSON_VERSION

    @property
    def failed(self) -> list[NoteScore]:
        return [n for n in self.notes if n.score < self.threshold]


class NotInDiff(Record):
    """A path a handover lists that the PR does not change (its KB412 item)."""

    note: str
    """The handover."""
    path: str
    line: int


class PrReport(Record, json=("version", "base", "head", "score", "handovers", "changed",
                             "unmentioned", "not_in_diff", "missing", "open_questions")):
    base: str
    head: str
    score: int
    handovers: tuple[NoteScore, ...]
    changed: tuple[str, ...]
    """Files the PR changed that a handover should mention (typed notes left out)."""
    unmentioned: tuple[str, ...]
    """Of `changed`, those no handover lists under Changes Made."""
    missing: tuple[Missing, ...] = ()
    """PR-level items: no handover (KB414), unmentioned files (KB413)."""
    open_questions: tuple[Question, ...] = ()
    version: int = JSON_VERSION

    @property
    def not_in_diff(self) -> list[NotInDiff]:
        """Each listed path the PR does not change (the handovers' KB412 items)."""
        return [NotInDiff(h.path, m.subject, m.line) for h in self.handovers
                for m in h.missing if m.code == "KB412"]


class Handovers:
    """One vault's notes, texts and assessor (state: texts read on demand)."""

    def __init__(self, vault: Vault, extra: Sequence[str] = (), *, use_cache: bool = True,
                 diff: Sequence[str] | None = None,
                 deleted: frozenset[str] | None = None) -> None:
        self.vault = vault
        notes, _ = scan(vault, use_cache=use_cache)
        self._texts: dict[str, str] = {}
        self.untracked: list[str] = []
        for rel in extra:  # a skeleton not yet `git add`ed: read from disk
            data = read_input(vault.root / rel, within=vault.root, follow_links=False)
            notes.append(parse_note(rel, data, max_bytes=vault.config.vault.max_note_bytes))
            self._texts[rel] = note_text(data)
            self.untracked.append(rel)
        self.notes = {n.path: n for n in notes}
        files = [*vault.files, *self.untracked]
        resolver = Resolver(notes, files, resolve_aliases=vault.config.links.resolve_aliases,
                            include_dot=vault.config.vault.include_dot_folders)
        staged = vault.mode == "git-index"

        def _deleted(path: str) -> frozenset[str]:
            if deleted is not None:
                return deleted
            return history.deleted_with(vault.root, path, staged=staged)

        self.assessor = Assessor(notes, files, vault.config.types, resolver,
                                 deleted=_deleted, diff=diff)

    def text(self, path: str) -> str:
        if path not in self._texts:
            nf = self.vault.note(path)
            if nf is None:
                raise UsageError(f"not a note of this vault: {path}")
            self._texts[path] = note_text(self.vault.read([nf])[path])
        return self._texts[path]

    def score(self, path: str) -> NoteScore | None:
        return self.assessor.assess(self.notes[path], self.text(path))

    def typed(self, type_name: str | None = None) -> list[str]:
        return [p for p in sorted(self.notes) if (t := self.assessor.type_of(p)) is not None
                and (type_name is None or t.name == type_name)]

    def questions(self, paths: Sequence[str]) -> tuple[Question, ...]:
        out = []
        for p in paths:
            note = self.notes[p]
            t = self.assessor.type_of(p)
            spec = (t.section_spec("Question") if t else None) or SectionSpec("Question")
            body = section_items(note, self.text(p), spec.names)
            urgency = note.frontmatter.get("urgency")
            out.append(Question(p, note.title, body[0] if body else "",
                                None if urgency is None else str(urgency)))
        return tuple(out)


def select_notes(vault: Vault, args: Sequence[str]) -> tuple[list[str], list[str]]:
    """(tracked note paths, untracked Markdown files inside the vault) for NOTES arguments."""
    found, rejected = vault.select(args)
    extra: list[str] = []
    for arg in rejected:
        rel = vault.relative(arg)
        full = vault.root / rel if rel is not None else None
        if rel is None or full is None or not vault.is_note_path(rel) or not full.is_file():
            raise UsageError(f"not a note of this vault: {arg}")
        if os.path.islink(full) or not full.resolve().is_relative_to(vault.root):
            raise UsageError(f"not a note of this vault (a link out of it): {arg}")
        extra.append(rel)
    return [n.path for n in found], extra


def check_notes(vault: Vault, args: Sequence[str] = (), *, threshold: int | None = None,
                use_cache: bool = True) -> HandoverReport:
    """Score the typed notes named in `args` (default: every typed note)."""
    tracked, extra = select_notes(vault, args) if args else ([], [])
    hv = Handovers(vault, extra, use_cache=use_cache)
    paths = [*tracked, *extra] if args else hv.typed()
    scores, untyped = [], []
    for p in paths:
        s = hv.score(p)
        if s is None:
            untyped.append(p)
        else:
            scores.append(s)
    orphans = tuple(OrphanAnswer(s.path, missed) for s in scores if s.type == "answer" and
                    (missed := tuple(m for m in s.missing if m.code == "KB409")))
    # Named notes: only the open questions among them or linked from them.
    open_q = hv.assessor.open_questions()
    if args:
        named = set(paths)
        open_q = sorted({q for q in open_q if q in named} | set(linked_open(hv, paths)))
    bar = vault.config.handover.threshold if threshold is None else threshold
    return HandoverReport(tuple(s._replace(passed=s.score >= bar) for s in scores), bar,
                          hv.questions(open_q), orphans, tuple(untyped))


def pr_report(vault: Vault, base: str, head: str = "HEAD", *,
              use_cache: bool = True) -> PrReport:
    """The handover section of a PR report. The work tree must hold `head` (as in CI)."""
    root = vault.root
    head_sha = rev_commit(root, head)
    if head_sha is None:
        raise GitError(f"not a commit in this repository: {head}")
    if head_commit(root) != head_sha:
        raise UsageError(f"the work tree is not at {head}: check it out first")
    changes = changes_between(root, base, head)
    touched = {c.path for c in changes} | {c.old_path for c in changes if c.old_path}
    hv = Handovers(vault, use_cache=use_cache, diff=sorted(touched),
                   deleted=history.deleted_paths(changes))
    handovers = [c.path for c in changes if c.kind != "deleted" and c.path in hv.notes
                 and hv.assessor.is_type(c.path, "handover")]
    scores = tuple(s for p in handovers if (s := hv.score(p)) is not None)
    changed = [c for c in changes if c.path not in hv.notes
               or hv.assessor.type_of(c.path) is None]
    listed = [lp.path for s in scores for lp in s.paths]
    unmentioned = [c.path for c in changed
                   if not any(path_matches(lp, c.path)
                              or (c.old_path and path_matches(lp, c.old_path))
                              for lp in listed)]
    missing = [Missing("KB413", "pr", f"`{p}` is changed by this PR but no handover "
                       "mentions it", subject=p) for p in unmentioned]
    if not scores:
        missing.insert(0, Missing("KB414", "pr", "this PR adds or changes no handover note"))
        score = 0
    else:
        mean = sum(s.score for s in scores) / len(scores)
        cover = 1.0 if not changed else (len(changed) - len(unmentioned)) / len(changed)
        score = round(0.8 * mean + 20 * cover)
    linked = linked_open(hv, handovers)
    return PrReport(base, head, score, scores, tuple(c.path for c in changed),
                    tuple(unmentioned), tuple(missing), hv.questions(linked))


def linked_open(hv: Handovers, notes: Sequence[str], track: str | None = None) -> list[str]:
    """Open questions the notes link, plus open questions of `track`."""
    open_q = set(hv.assessor.open_questions())
    out: set[str] = set()
    for p in notes:
        for link in hv.notes[p].links:
            r = hv.assessor.resolver.resolve(p, link)
            if r.target in open_q:
                out.add(r.target)
    if track is not None:
        out |= {q for q in open_q
                if lowered(hv.notes[q].frontmatter.get("track")) == track.lower()}
    return sorted(out)


def lowered(v: Any) -> str:
    """A frontmatter value as compared: `track: 3` and `track: "3"` are the same track."""
    return "" if v is None else str(v).strip().lower()


__all__ = ["HandoverReport", "Handovers", "PrReport", "Question", "check_notes", "linked_open",
           "pr_report", "select_notes"]
