"""The CI report as records, and its JSON form (`report.json`, `CiReport.to_json`;
read back by `reportjson.from_json`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from kbase_ci.ci.conceptgaps import ConceptChange
from kbase_ci.git.diff import FileChange
from kbase_ci.parsed import Finding, Severity
from kbase_ci.vault.linkgraph import Gap, Orphan

FORMAT = "kbase-ci-report"
VERSION = 1
FindingStatus = Literal["new", "fixed", "pre-existing", "present"]
"""`present`: a report without a base commit (a push), where nothing can be new."""
FailOn = Literal["new", "all", "none"]
STATUSES: tuple[FindingStatus, ...] = ("new", "fixed", "pre-existing", "present")
FAIL_ON: tuple[FailOn, ...] = ("new", "all", "none")


@dataclass(frozen=True, slots=True)
class MarkedFinding:
    status: FindingStatus
    finding: Finding
    """For `fixed`: the finding as it was at the base commit (its path and line there)."""


@dataclass(frozen=True, slots=True)
class HandoverItem:
    code: str
    message: str
    line: int = 1


@dataclass(frozen=True, slots=True)
class HandoverNote:
    path: str
    score: int
    status: str | None
    missing: tuple[HandoverItem, ...]


@dataclass(frozen=True, slots=True)
class HandoverSummary:
    """Completeness of the handover notes a PR adds or changes (see `handover.pr_report`)."""

    score: int
    threshold: int
    notes: tuple[HandoverNote, ...]
    items: tuple[HandoverItem, ...]
    """PR-level items: files no handover mentions (KB413), no handover at all (KB414)."""


@dataclass(frozen=True, slots=True)
class GraphView:
    """The notes a PR changed and their neighbours at the head commit."""

    nodes: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    edges: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CiReport:
    event: str
    repository: str
    server_url: str
    head: str
    base: str | None
    """The merge base the head is compared with; None for a push (nothing is `new`)."""
    pr_number: int | None
    vault_prefix: str
    """The vault's folder in the repository ("" at its root, else ending in `/`)."""
    fail_on: FailOn
    notes: int
    changes: tuple[FileChange, ...] = ()
    findings: tuple[MarkedFinding, ...] = ()
    new_orphans: tuple[Orphan, ...] = ()
    fixed_orphans: tuple[str, ...] = ()
    orphans: int = 0
    new_gaps: tuple[Gap, ...] = ()
    closed_gaps: tuple[str, ...] = ()
    gaps: int = 0
    handover: HandoverSummary | None = None
    notices: tuple[str, ...] = ()
    """What the report could not cover, and why (shown under the table)."""
    graph: GraphView = GraphView()
    new_concepts: tuple[ConceptChange, ...] = ()
    """Undocumented concepts that are gaps at the head and were not at the base."""
    closed_concepts: tuple[str, ...] = ()
    """Concepts that were gaps at the base and a note of the head now documents."""
    fail_level: Severity = "error"
    """Warnings fail the run too only at `warning` (`--fail-on new,warning`)."""
    policy_sections: tuple[str, ...] = ()
    """The `.kbase.yml` sections this PR changes that judge notes (issue 38)."""
    policy_unseen: tuple[Finding, ...] = ()
    """What the base's settings would report as new in this PR and its own do not: a PR
    cannot switch a check off unremarked."""

    def with_status(self, *statuses: FindingStatus) -> list[Finding]:
        return [m.finding for m in self.findings if m.status in statuses]

    @property
    def failing(self) -> int:
        """Findings that fail the run under `fail_on` and `fail_level`."""
        if self.fail_on == "none":
            return 0
        statuses: tuple[FindingStatus, ...] = ("new",) if self.fail_on == "new" else (
            "new", "pre-existing", "present")
        return sum(1 for f in self.with_status(*statuses)
                   if self.fail_level == "warning" or f.severity == "error")

    def to_json(self) -> dict[str, Any]:
        h = self.handover
        return {
            "format": FORMAT, "version": VERSION, "event": self.event,
            "repository": self.repository, "server_url": self.server_url,
            "head": self.head, "base": self.base, "pr_number": self.pr_number,
            "vault_prefix": self.vault_prefix, "fail_on": self.fail_on,
            "fail_level": self.fail_level, "notes": self.notes,
            "changes": [{"kind": c.kind, "path": c.path, "old_path": c.old_path}
                        for c in self.changes],
            "findings": [{"status": m.status, **m.finding.to_json()} for m in self.findings],
            "orphans": {"total": self.orphans, "new": [o.to_json() for o in self.new_orphans],
                        "fixed": list(self.fixed_orphans)},
            "gaps": {"total": self.gaps, "new": [g.to_json() for g in self.new_gaps],
                     "closed": list(self.closed_gaps)},
            "handover": None if h is None else {
                "score": h.score, "threshold": h.threshold,
                "notes": [{"path": n.path, "score": n.score, "status": n.status,
                           "missing": [_item_json(i) for i in n.missing]} for n in h.notes],
                "items": [_item_json(i) for i in h.items]},
            "notices": list(self.notices),
            "graph": {"nodes": list(self.graph.nodes), "changed": list(self.graph.changed),
                      "edges": [list(e) for e in self.graph.edges]},
            "concepts": {"new": [c.to_json() for c in self.new_concepts],
                         "closed": list(self.closed_concepts)},
            "policy": {"sections": list(self.policy_sections),
                       "unseen": [{"status": "new", **f.to_json()}
                                  for f in self.policy_unseen]}
            if self.policy_sections else None,
        }


def _item_json(i: HandoverItem) -> dict[str, Any]:
    return {"code": i.code, "message": i.message, "line": i.line}
