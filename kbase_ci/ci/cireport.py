"""The CI report as records, written as `report.json` (`to_json`) and read back from it
(`from_json`: the `workflow_run` companion reads a report that a fork's PR workflow
uploaded, so every value is checked against the declared types before anything is
rendered from it). A path that could steer a link elsewhere (`..`, absolute, NUL) is
refused rather than cleaned; any path git can name is accepted (kbase reports them).
"""

# No `from __future__ import annotations`: the records' annotations are evaluated once,
# here, instead of compiled and evaluated again by the first decode of every process.

from typing import Annotated, Any, Literal

from kbase_ci.ci.conceptgaps import ConceptChange
from kbase_ci.errors import UsageError
from kbase_ci.git.diff import FileChange
from kbase_ci.parsed import Count, Finding, Many, RepoPath, Severity, Text, repo_path
from kbase_ci.typedjson import Check, Record, ShapeError, decode, json_field, matching
from kbase_ci.vault.linkgraph import Gap, Orphan

FORMAT: Literal["kbase-ci-report"] = "kbase-ci-report"
VERSION: Literal[1] = 1
FindingStatus = Literal["new", "fixed", "pre-existing", "present"]
"""`present`: a report without a base commit (a push), where nothing can be new."""
FailOn = Literal["new", "all", "none"]
STATUSES: tuple[FindingStatus, ...] = ("new", "fixed", "pre-existing", "present")
FAIL_ON: tuple[FailOn, ...] = ("new", "all", "none")
Sha = Annotated[Text, matching(r"[0-9a-f]{40}(?:[0-9a-f]{24})?", "a commit id")]
Prefix = Annotated[Text, Check(lambda v: not v or (v.endswith("/") and repo_path(v[:-1])),
                               "'' or a folder ending in /")]


class MarkedFinding(Record):
    status: FindingStatus
    finding: Finding = json_field(flatten=True)
    """For `fixed`: the finding as it was at the base commit (its path and line there)."""


class HandoverItem(Record):
    code: Text
    message: Text
    line: Count = 1


class HandoverNote(Record):
    path: RepoPath
    score: Count
    status: Text | None
    missing: Many[HandoverItem]


class HandoverSummary(Record):
    """Completeness of the handover notes a PR adds or changes (see `handover.pr_report`)."""

    score: Count
    threshold: Count
    notes: Many[HandoverNote]
    items: Many[HandoverItem]
    """PR-level items: files no handover mentions (KB413), no handover at all (KB414)."""


class GraphView(Record):
    """The notes a PR changed and their neighbours at the head commit."""

    nodes: Many[RepoPath] = ()
    changed: Many[RepoPath] = ()
    edges: Many[tuple[RepoPath, RepoPath]] = ()


class PolicyChange(Record):
    """The `.kbase.yml` sections a PR changes that judge notes (issue 38), and what the
    base's settings would report as new in it and its own do not (each `new`): a PR
    cannot switch a check off unremarked."""

    sections: Many[Text]
    unseen: Many[MarkedFinding] = ()


class CiReport(Record, json=(
        "format", "version", "event", "repository", "server_url", "head", "base",
        "pr_number", "vault_prefix", "fail_on", "fail_level", "notes", "changes", "findings",
        ("orphans", "total", "new", "fixed"), ("gaps", "total", "new", "closed"), "handover",
        "notices", "graph", "concepts", "policy")):
    event: Text
    repository: Text
    server_url: Text
    head: Sha
    base: Sha | None
    """The merge base the head is compared with; None for a push (nothing is `new`)."""
    pr_number: Count | None
    vault_prefix: Prefix
    """The vault's folder in the repository ("" at its root, else ending in `/`)."""
    fail_on: FailOn
    notes: Count
    changes: Many[FileChange] = ()
    findings: Many[MarkedFinding] = ()
    new_orphans: Many[Orphan] = json_field(default=(), within="orphans", key="new")
    fixed_orphans: Many[RepoPath] = json_field(default=(), within="orphans", key="fixed")
    orphans: Count = json_field(default=0, within="orphans", key="total")
    new_gaps: Many[Gap] = json_field(default=(), within="gaps", key="new")
    closed_gaps: Many[Text] = json_field(default=(), within="gaps", key="closed")
    gaps: Count = json_field(default=0, within="gaps", key="total")
    handover: HandoverSummary | None = None
    notices: Many[Text] = ()
    """What the report could not cover, and why (shown under the table)."""
    graph: GraphView = GraphView()
    new_concepts: Many[ConceptChange] = json_field(default=(), within="concepts", key="new")
    """Undocumented concepts that are gaps at the head and were not at the base."""
    closed_concepts: Many[Text] = json_field(default=(), within="concepts", key="closed")
    """Concepts that were gaps at the base and a note of the head now documents."""
    fail_level: Severity = "error"
    """Warnings fail the run too only at `warning` (`--fail-on new,warning`)."""
    policy: PolicyChange | None = None
    """None unless the PR changes how `.kbase.yml` judges notes."""
    format: Literal["kbase-ci-report"] = FORMAT
    version: Literal[1] = VERSION

    @property
    def policy_sections(self) -> tuple[str, ...]:
        return () if self.policy is None else self.policy.sections

    @property
    def policy_unseen(self) -> tuple[Finding, ...]:
        return () if self.policy is None else tuple(m.finding for m in self.policy.unseen)

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


def from_json(data: Any) -> CiReport:
    """A report read back from JSON; UsageError naming the first key that is wrong."""
    if not isinstance(data, dict) or data.get("format") != FORMAT \
            or data.get("version") != VERSION:
        raise UsageError(f"report.json: not a {FORMAT} version {VERSION} report")
    try:
        return decode(CiReport, data)
    except ShapeError as exc:
        raise UsageError(f"report.json: {exc}") from None
