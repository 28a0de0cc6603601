"""Scores: what one typed note is missing, and what each missing item costs.

Each part of a note type (field, section, triggered rule) has a weight; a note earns the
weight of what it gets right, or a share of it (one of four Changes Made paths missing
costs a quarter). The score is earned / possible * 100, and every lost share is a
`Missing` item with its code, location and points, so the score and the findings of the
`handover` check come from the same arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence

from kbase_ci.handover.sectionitems import ListedPath
from kbase_ci.parsed import Finding, Severity
from kbase_ci.typedjson import Record, json_field


class Missing(Record):
    code: str
    rule: str
    """What the item belongs to: `section Changes Made`, `field track`, `rule ...`."""
    message: str
    line: int = 1
    col: int = 1
    points: float = 0.0
    """Score points (of 100) this item costs."""
    severity: Severity = "error"
    subject: str = ""
    """The path or name the item is about (a Changes Made path), when there is one."""


def _listed(paths: tuple[ListedPath, ...]) -> list[str]:
    return [p.path for p in paths]


class NoteScore(Record):
    path: str
    type: str
    score: int
    status: str | None
    missing: tuple[Missing, ...]
    paths: tuple[ListedPath, ...] = json_field(default=(), as_json=_listed)
    """Paths listed under a `paths` section (Changes Made); the JSON has the paths."""
    passed: bool | None = json_field(default=None, omit=True)
    """Whether it reaches the threshold, in a report that has one (`HandoverReport`)."""

    def findings(self, check: str = "handover") -> list[Finding]:
        return [Finding(self.path, m.line, m.col, m.code, m.message, m.severity, check)
                for m in self.missing]


class Tally:
    """Weights earned and lost while one note is assessed."""

    def __init__(self) -> None:
        self.possible = 0.0
        self.earned = 0.0
        self.rows: list[tuple[float, Missing]] = []

    def add(self, weight: float, fraction: float, problems: Sequence[Missing]) -> None:
        fraction = min(max(fraction, 0.0), 1.0)
        self.possible += weight
        self.earned += weight * fraction
        lost = weight * (1 - fraction)
        for p in problems:
            self.rows.append((lost / len(problems), p))

    def warn(self, problem: Missing) -> None:
        """An item that costs no points (a "check the code" sentence, an open question)."""
        self.rows.append((0.0, problem))

    def result(self) -> tuple[int, tuple[Missing, ...]]:
        score = 100 if self.possible == 0 else round(100 * self.earned / self.possible)
        items = tuple(Missing(m.code, m.rule, m.message, m.line, m.col,
                              round(100 * lost / self.possible, 1) if self.possible else 0.0,
                              m.severity if lost == 0 else "error", m.subject)
                      for lost, m in self.rows)
        return score, tuple(sorted(items, key=lambda m: (m.line, m.col, m.code)))

