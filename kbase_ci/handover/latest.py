"""`kbase handover latest`: where a resuming agent picks up the work.

The newest handover (of a track) by frontmatter date, then by commit date (a note not
committed yet is the newest of its date), with its open next steps, its blockers, and
the questions still waiting for an answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbase_ci.git import history
from kbase_ci.handover.handovers import Handovers, Question, linked_open, lowered
from kbase_ci.handover.scoring import NoteScore
from kbase_ci.handover.sectionitems import section_items
from kbase_ci.typedjson import Record, json_field
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.notetypes import SectionSpec


@dataclass(frozen=True)
class Latest:
    """The newest handover (as an answer, with its JSON: kbase_ci.query.tools.handover)."""

    note: NoteScore
    title: str
    track: str | None
    date: str | None
    committed: int | None
    """Unix time of its last commit; None when not committed yet."""
    next_steps: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    questions: tuple[Question, ...] = field(default_factory=tuple)
    """Unanswered questions it links, or of its track."""


def latest(vault: Vault, track: str | None = None, *, use_cache: bool = True) -> Latest | None:
    """The newest handover (of `track`): by frontmatter date, then commit date."""
    hv = Handovers(vault, use_cache=use_cache)
    cands = [p for p in hv.typed("handover")
             if track is None or lowered(hv.notes[p].frontmatter.get("track")) == track.lower()]
    if not cands:
        return None
    dates = {p: lowered(hv.notes[p].frontmatter.get("date"))[:10] for p in cands}
    newest = max(dates.values())
    tied = [p for p in cands if dates[p] == newest]
    committed = {p: history.commit_time(vault.root, p) for p in tied}
    now = int(time.time())
    best = max(tied, key=lambda p: (committed[p] if committed[p] is not None else now, p))
    note = hv.notes[best]
    score = hv.score(best)
    assert score is not None  # chosen among typed notes
    text = hv.text(best)
    t = hv.assessor.type_of(best)
    spec_of = t.section_spec if t is not None else (lambda _n: None)
    steps = section_items(note, text, (spec_of("Next Steps") or SectionSpec("Next Steps")).names)
    blockers = section_items(note, text, (spec_of("Blockers") or SectionSpec("Blockers")).names)
    h1 = next((h.text for h in note.headings if h.level == 1), note.title)
    return Latest(score, h1, _optional(note.frontmatter.get("track")), dates[best] or None,
                  committed[best], tuple(steps), tuple(blockers),
                  hv.questions(linked_open(hv, [best], track)))


def _optional(v: Any) -> str | None:
    return None if v is None else str(v)


class HandoverRef(Record):
    path: str
    title: str
    track: str | None
    date: str | None
    status: str | None
    score: int
    committed: int | None
    """Unix time of its last commit; None when not committed yet."""


class OpenQuestion(Record):
    """A `Question` in the answer (its JSON is read back for a text form in a budget)."""

    path: str
    title: str
    question: str
    urgency: str | None


class MissingItem(Record):
    """A `Missing` item in the answer, as `Missing.to_json` writes it."""

    code: str
    rule: str
    message: str
    line: int
    col: int
    points: float
    severity: str
    subject: str


class HandoverAnswer(Record):
    """`kbase handover latest`'s answer (kbase_ci.query.tools.handover)."""

    version: int
    handover: HandoverRef
    next_steps: list[str]
    blockers: list[str]
    unanswered_questions: list[OpenQuestion]
    missing: list[MissingItem]
    root: Path = json_field(hidden=True)
    """The vault's root: the text form shows paths from the current folder."""
