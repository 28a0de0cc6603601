"""The CI report as records, and its JSON form (`report.json`).

`from_json` is strict: the `workflow_run` companion reads a report that a fork's PR
workflow uploaded, so every field is checked for type and shape before anything is
rendered from it, and a path that could steer a link elsewhere (`..`, absolute, NUL)
is refused rather than cleaned; any path git can name is accepted (kbase reports them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from kbase_ci.ci.conceptgaps import ConceptChange
from kbase_ci.errors import UsageError
from kbase_ci.git.diff import FileChange
from kbase_ci.model import Finding, Severity
from kbase_ci.vault.linkgraph import Gap, GapSource, Orphan

FORMAT = "kbase-ci-report"
VERSION = 1
FindingStatus = Literal["new", "fixed", "pre-existing", "present"]
"""`present`: a report without a base commit (a push), where nothing can be new."""
FailOn = Literal["new", "all", "none"]
STATUSES: tuple[FindingStatus, ...] = ("new", "fixed", "pre-existing", "present")
FAIL_ON: tuple[FailOn, ...] = ("new", "all", "none")
_KINDS = ("added", "modified", "deleted", "renamed", "copied", "type-changed")
_MAX_ITEMS = 500_000
T = TypeVar("T")


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
        }


def _item_json(i: HandoverItem) -> dict[str, Any]:
    return {"code": i.code, "message": i.message, "line": i.line}


def from_json(data: Any) -> CiReport:
    """A report read back from JSON; UsageError naming the first field that is wrong."""
    r = _Reader(data, "report.json")
    if r.text("format") != FORMAT or r.num("version") != VERSION:
        raise UsageError(f"report.json: not a {FORMAT} version {VERSION} report")
    orphans, gaps, graph = r.obj("orphans"), r.obj("gaps"), r.obj("graph")
    hv = r.opt_obj("handover")
    concepts = r.opt_obj("concepts")
    return CiReport(
        event=r.text("event"), repository=r.text("repository"), server_url=r.text("server_url"),
        head=r.sha("head"), base=None if r.raw("base") is None else r.sha("base"),
        pr_number=r.opt_num("pr_number"), vault_prefix=r.prefix("vault_prefix"),
        fail_on=cast(FailOn, r.choice("fail_on", FAIL_ON)), notes=r.num("notes"),
        fail_level=cast(Severity, r.choice("fail_level", ("error", "warning"))
                        if r.opt_text("fail_level") is not None else "error"),
        changes=tuple(r.items("changes", lambda c: FileChange(
            cast(Any, c.choice("kind", _KINDS)), c.path("path"),
            None if c.raw("old_path") is None else c.path("old_path")))),
        findings=tuple(r.items("findings", _finding)),
        orphans=orphans.num("total"),
        new_orphans=tuple(orphans.items("new", lambda o: Orphan(
            o.path("path"), o.flag("isolated"), o.num("outgoing")))),
        fixed_orphans=tuple(orphans.paths("fixed")),
        gaps=gaps.num("total"),
        new_gaps=tuple(gaps.items("new", lambda g: Gap(
            g.text("key"), g.text("target"), cast(Any, g.choice("kind", ("note", "file"))),
            tuple(g.items("sources", lambda s: GapSource(
                s.path("path"), s.num("line"), s.num("col"), s.text("raw"))))))),
        closed_gaps=tuple(gaps.strs("closed")),
        handover=None if hv is None else HandoverSummary(
            hv.num("score"), hv.num("threshold"),
            tuple(hv.items("notes", lambda n: HandoverNote(
                n.path("path"), n.num("score"), n.opt_text("status"),
                tuple(n.items("missing", _handover_item))))),
            tuple(hv.items("items", _handover_item))),
        notices=tuple(r.strs("notices")),
        graph=GraphView(tuple(graph.paths("nodes")), tuple(graph.paths("changed")),
                        tuple(graph.items("edges", lambda e: (e.path(0), e.path(1))))),
        new_concepts=() if concepts is None else tuple(concepts.items("new", _concept)),
        closed_concepts=() if concepts is None else tuple(concepts.strs("closed")),
    )


def _concept(c: _Reader) -> ConceptChange:
    return ConceptChange(c.text("name"), c.text("key"), c.num("notes"), tuple(
        c.items("places", lambda p: (p.path("path"), p.num("line")))))


def _finding(f: _Reader) -> MarkedFinding:
    return MarkedFinding(
        cast(FindingStatus, f.choice("status", STATUSES)),
        Finding(f.path("path"), f.num("line"), f.num("col"), f.text("code"), f.text("message"),
                cast(Any, f.choice("severity", ("error", "warning"))), f.text("check"),
                f.opt_text("suggestion")))


def _handover_item(i: _Reader) -> HandoverItem:
    return HandoverItem(i.text("code"), i.text("message"), i.num("line"))


class _Reader:
    """Typed access to one JSON object or array, with the path to it for errors."""

    def __init__(self, data: Any, where: str) -> None:
        self.data, self.where = data, where

    def raw(self, key: str | int) -> Any:
        if isinstance(self.data, dict) and isinstance(key, str):
            return self.data.get(key)
        if isinstance(self.data, list) and isinstance(key, int) and key < len(self.data):
            return self.data[key]
        raise self._bad(key, "present")

    def _bad(self, key: str | int, what: str) -> UsageError:
        return UsageError(f"{self.where}.{key}: expected {what}")

    def _typed(self, key: str | int, kind: type[T], what: str) -> T:
        value = self.raw(key)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise self._bad(key, what)
        return value

    def text(self, key: str | int) -> str:
        value = self._typed(key, str, "a string")
        if len(value) > 100_000:
            raise self._bad(key, "a shorter string")
        return value

    def opt_text(self, key: str) -> str | None:
        return None if self.raw(key) is None else self.text(key)

    def num(self, key: str) -> int:
        value = self._typed(key, int, "an integer")
        if not 0 <= value < 2**53:
            raise self._bad(key, "a non-negative integer")
        return value

    def opt_num(self, key: str) -> int | None:
        return None if self.raw(key) is None else self.num(key)

    def flag(self, key: str) -> bool:
        return self._typed(key, bool, "true or false")

    def choice(self, key: str, allowed: tuple[str, ...]) -> str:
        value = self.text(key)
        if value not in allowed:
            raise self._bad(key, " | ".join(allowed))
        return value

    def sha(self, key: str) -> str:
        value = self.text(key)
        if len(value) not in (40, 64) or any(c not in "0123456789abcdef" for c in value):
            raise self._bad(key, "a commit id")
        return value

    def path(self, key: str | int) -> str:
        """A path git could have named: relative, no empty, `.`, `..` or `.git` part, no
        NUL. Anything else git allows (a tab, a backslash, a newline) is a real file name
        kbase itself reports, so it is accepted: every sink escapes it (report.escape),
        and a link to it is percent-encoded, so it cannot steer a link elsewhere."""
        value = self.text(key)
        parts = value.split("/")
        if (not value or value.startswith("/") or "\0" in value
                or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts)):
            raise self._bad(key, "a relative path inside the repository")
        return value

    def prefix(self, key: str) -> str:
        value = self.text(key)
        if value and (not value.endswith("/") or self._sub(value[:-1]) is None):
            raise self._bad(key, "'' or a folder ending in /")
        return value

    def _sub(self, value: str) -> str | None:
        try:
            return _Reader([value], self.where).path(0)
        except UsageError:
            return None

    def obj(self, key: str) -> _Reader:
        return _Reader(self._typed(key, dict, "an object"), f"{self.where}.{key}")

    def opt_obj(self, key: str) -> _Reader | None:
        return None if self.raw(key) is None else self.obj(key)

    def items(self, key: str, make: Callable[[_Reader], T]) -> list[T]:
        values = self._typed(key, list, "an array")
        if len(values) > _MAX_ITEMS:
            raise self._bad(key, f"at most {_MAX_ITEMS} items")
        return [make(_Reader(v, f"{self.where}.{key}[{i}]")) for i, v in enumerate(values)]

    def strs(self, key: str) -> list[str]:
        return self.items(key, lambda r: r._self_str())

    def paths(self, key: str) -> list[str]:
        return self.items(key, lambda r: _Reader([r.data], r.where).path(0))

    def _self_str(self) -> str:
        return _Reader([self.data], self.where).text(0)
