"""`report.json` read back: the `workflow_run` companion reads a report that a fork's PR
workflow uploaded, so its shape is declared here (`ReportJson`, as `CiReport.to_json`
writes it) and every value is checked (`typedjson.decode`) before anything is rendered
from it. A path that could steer a link elsewhere (`..`, absolute, NUL) is refused
rather than cleaned; any path git can name is accepted (kbase reports them).
"""

# No `from __future__ import annotations`: the records' annotations are evaluated once,
# here, instead of compiled and evaluated again by the first decode of every process
# (`typedjson.decoding._hints`).

from typing import Annotated, Any, Literal

from kbase_ci.ci.cireport import (
    FORMAT,
    VERSION,
    CiReport,
    FailOn,
    FindingStatus,
    GraphView,
    HandoverItem,
    HandoverNote,
    HandoverSummary,
    MarkedFinding,
)
from kbase_ci.ci.conceptgaps import ConceptChange
from kbase_ci.errors import UsageError
from kbase_ci.git.diff import ChangeKind, FileChange
from kbase_ci.parsed import Finding, Severity
from kbase_ci.typedjson import Check, Record, ShapeError, between, decode, matching
from kbase_ci.vault.linkgraph import Gap, GapKind, GapSource, Orphan

_MAX_ITEMS = 500_000


def _repo_path(value: str) -> bool:
    """A path git could have named: relative, no empty, `.`, `..` or `.git` part, no
    NUL. Anything else git allows (a tab, a backslash, a newline) is a real file name
    kbase itself reports, so it is accepted: every sink escapes it (report.escape), and
    a link to it is percent-encoded, so it cannot steer a link elsewhere."""
    parts = value.split("/")
    return not (not value or value.startswith("/") or "\0" in value
                or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts))


Text = Annotated[str, Check(lambda v: len(v) <= 100_000, "at most 100000 characters")]
Number = Annotated[int, between(0, 2**53 - 1)]
Sha = Annotated[Text, matching(r"[0-9a-f]{40}(?:[0-9a-f]{24})?", "a commit id")]
RepoPath = Annotated[Text, Check(_repo_path, "a relative path inside the repository")]
Prefix = Annotated[Text, Check(lambda v: not v or (v.endswith("/") and _repo_path(v[:-1])),
                               "'' or a folder ending in /")]
_MANY = Check(lambda v: len(v) <= _MAX_ITEMS, f"at most {_MAX_ITEMS} items")


class ChangeJson(Record):
    kind: ChangeKind
    path: RepoPath
    old_path: RepoPath | None = None


class FindingJson(Record):
    status: FindingStatus
    path: RepoPath
    line: Number
    col: Number
    code: Text
    message: Text
    severity: Severity
    check: Text
    suggestion: Text | None = None


class OrphanJson(Record):
    path: RepoPath
    isolated: bool
    outgoing: Number


class OrphansJson(Record):
    total: Number
    new: Annotated[tuple[OrphanJson, ...], _MANY]
    fixed: Annotated[tuple[RepoPath, ...], _MANY]


class GapSourceJson(Record):
    path: RepoPath
    line: Number
    col: Number
    raw: Text


class GapJson(Record):
    key: Text
    target: Text
    kind: GapKind
    sources: Annotated[tuple[GapSourceJson, ...], _MANY]


class GapsJson(Record):
    total: Number
    new: Annotated[tuple[GapJson, ...], _MANY]
    closed: Annotated[tuple[Text, ...], _MANY]


class ItemJson(Record):
    code: Text
    message: Text
    line: Number


class HandoverNoteJson(Record):
    path: RepoPath
    score: Number
    status: Text | None
    missing: Annotated[tuple[ItemJson, ...], _MANY]


class HandoverJson(Record):
    score: Number
    threshold: Number
    notes: Annotated[tuple[HandoverNoteJson, ...], _MANY]
    items: Annotated[tuple[ItemJson, ...], _MANY]


class GraphJson(Record):
    nodes: Annotated[tuple[RepoPath, ...], _MANY]
    changed: Annotated[tuple[RepoPath, ...], _MANY]
    edges: Annotated[tuple[tuple[RepoPath, RepoPath], ...], _MANY]


class PlaceJson(Record):
    path: RepoPath
    line: Number


class ConceptJson(Record):
    name: Text
    key: Text
    notes: Number
    places: Annotated[tuple[PlaceJson, ...], _MANY]


class ConceptsJson(Record):
    new: Annotated[tuple[ConceptJson, ...], _MANY]
    closed: Annotated[tuple[Text, ...], _MANY]


class PolicyJson(Record):
    sections: Annotated[tuple[Text, ...], _MANY]
    unseen: Annotated[tuple[FindingJson, ...], _MANY]


class ReportJson(Record):
    """`report.json` as `CiReport.to_json` writes it, every value checked on reading
    (`from_json`); a key with a default may be absent."""

    format: Literal["kbase-ci-report"]
    version: Literal[1]
    event: Text
    repository: Text
    server_url: Text
    head: Sha
    vault_prefix: Prefix
    fail_on: FailOn
    notes: Number
    changes: Annotated[tuple[ChangeJson, ...], _MANY]
    findings: Annotated[tuple[FindingJson, ...], _MANY]
    orphans: OrphansJson
    gaps: GapsJson
    notices: Annotated[tuple[Text, ...], _MANY]
    graph: GraphJson
    base: Sha | None = None
    pr_number: Number | None = None
    handover: HandoverJson | None = None
    concepts: ConceptsJson | None = None
    fail_level: Severity = "error"
    policy: PolicyJson | None = None


def from_json(data: Any) -> CiReport:
    """A report read back from JSON; UsageError naming the first key that is wrong."""
    if not isinstance(data, dict) or data.get("format") != FORMAT \
            or data.get("version") != VERSION:
        raise UsageError(f"report.json: not a {FORMAT} version {VERSION} report")
    try:
        r = decode(ReportJson, data)
    except ShapeError as exc:
        raise UsageError(f"report.json: {exc}") from None
    hv, concepts = r.handover, r.concepts
    return CiReport(
        event=r.event, repository=r.repository, server_url=r.server_url, head=r.head,
        base=r.base, pr_number=r.pr_number, vault_prefix=r.vault_prefix, fail_on=r.fail_on,
        fail_level=r.fail_level,
        notes=r.notes, changes=tuple(FileChange(c.kind, c.path, c.old_path) for c in r.changes),
        findings=tuple(MarkedFinding(f.status, _finding(f)) for f in r.findings),
        orphans=r.orphans.total,
        new_orphans=tuple(Orphan(o.path, o.isolated, o.outgoing) for o in r.orphans.new),
        fixed_orphans=r.orphans.fixed, gaps=r.gaps.total,
        new_gaps=tuple(Gap(g.key, g.target, g.kind, tuple(
            GapSource(s.path, s.line, s.col, s.raw) for s in g.sources)) for g in r.gaps.new),
        closed_gaps=r.gaps.closed,
        handover=None if hv is None else HandoverSummary(
            hv.score, hv.threshold,
            tuple(HandoverNote(n.path, n.score, n.status, _items(n.missing)) for n in hv.notes),
            _items(hv.items)),
        notices=r.notices, graph=GraphView(r.graph.nodes, r.graph.changed, r.graph.edges),
        new_concepts=() if concepts is None else tuple(
            ConceptChange(c.name, c.key, c.notes, tuple((p.path, p.line) for p in c.places))
            for c in concepts.new),
        closed_concepts=() if concepts is None else concepts.closed,
        policy_sections=() if r.policy is None else r.policy.sections,
        policy_unseen=() if r.policy is None else tuple(_finding(f) for f in r.policy.unseen),
    )


def _finding(f: FindingJson) -> Finding:
    return Finding(f.path, f.line, f.col, f.code, f.message, f.severity, f.check, f.suggestion)


def _items(items: tuple[ItemJson, ...]) -> tuple[HandoverItem, ...]:
    return tuple(HandoverItem(i.code, i.message, i.line) for i in items)
