"""What a PR did: its head commit compared with its merge base, finding by finding.

Both commits are read from git objects (`Vault(rev=...)`), never checked out, so PR
content is only ever data. Findings are matched as new, fixed or pre-existing by
`checks.findingmatch` (the hook's matcher too).
Orphans and gaps are diffed the same way; handover completeness comes from
`handover.pr_report`.

The base side runs in a forked process while the head side runs here: on a 2-core
runner the two checks of a 10k-note vault then cost one check's wall time.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from kbase_ci.checks import checkregistry as checks
from kbase_ci.checks.configchange import config_changed, judging_changes, policy_key
from kbase_ci.checks.findingmatch import AddedLines, mark
from kbase_ci.checks.findingmatch import match_key as match_key  # tests and callers
from kbase_ci.checks.stagedchanges import load_change
from kbase_ci.ci.cireport import (
    CiReport,
    FailOn,
    GraphView,
    HandoverItem,
    HandoverNote,
    HandoverSummary,
    MarkedFinding,
    PolicyChange,
)
from kbase_ci.ci.conceptgaps import pr_concepts
from kbase_ci.errors import KbaseError
from kbase_ci.git.diff import FileChange, added_lines, changes_between
from kbase_ci.handover.handovers import pr_report
from kbase_ci.parsed import Finding, Severity
from kbase_ci.vault.config import Config
from kbase_ci.vault.linkgraph import Gap, LinkGraph, Orphan, graph_of
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.scanner import open_store

MAX_GRAPH_NODES = 40


@dataclass(frozen=True)
class Side:
    """What one commit says: every finding, and its graph's orphans and gaps."""

    findings: tuple[Finding, ...]
    orphans: tuple[Orphan, ...]
    gaps: tuple[Gap, ...]
    notes: int
    broken: frozenset[tuple[str, int, int]] = frozenset()
    """(path, line, col) of the links a rename or deletion in the PR broke (head side):
    reported with that cause, and no note to write."""
    renames: int = 0
    """Of those, links `kbase fix --base` can rewrite to the renamed note."""


@dataclass(frozen=True)
class Context:
    """Where the report is for, as the renderer needs it (nothing here changes results)."""

    event: str = "local"
    repository: str = ""
    server_url: str = "https://github.com"
    pr_number: int | None = None
    fail_on: FailOn = "new"
    fail_level: Severity = "error"


def read_side(root: Path, rev: str, *, use_cache: bool = True,
              jobs: int | None = None, base: str | None = None,
              changes: Sequence[FileChange] = (), config: Config | None = None
              ) -> tuple[Side, LinkGraph]:
    """`check_vault(vault)` of the whole vault at `rev`, run here on a context we keep:
    the graph then reuses the links the checks resolved instead of resolving 60k again.
    With `base` and `changes` (base to `rev`), links the PR's renames and deletions broke
    are reported with their cause, as the hook reports them. `config`: judge with these
    settings instead of the commit's own."""
    vault = Vault(root, config, rev=rev)
    cfg = vault.config
    store, _ = open_store(vault, jobs=jobs, use_cache=use_cache)
    change = load_change(vault, changes, base=base, when="in this PR") \
        if base is not None and changes else None
    ctx = checks.CheckContext(store, vault.files, cfg, None, vault=vault, change=change)
    checks.policy_of(ctx)  # a located KB900 for an unknown code, before `select`
    findings = checks.run_checks(ctx, checks.select(cfg.checks.select, cfg.checks.ignore))
    broken = ctx.breakage.values()
    notes = ctx.notes
    graph = graph_of([n.path for n in notes], (ctx.resolved(n) for n in notes),
                     ignore_targets=cfg.links.ignore_targets,
                     markdown_links=cfg.links.markdown_links)
    return Side(tuple(findings), tuple(graph.orphans()), tuple(graph.gaps()),
                len(vault.notes), frozenset(b.key[:3] for b in broken),
                sum(1 for b in broken if b.fixable)), graph


def _base_side(root: Path, rev: str, use_cache: bool) -> Side:
    return read_side(root, rev, use_cache=use_cache, jobs=1)[0]


def snapshot(root: Path, head: str, ctx: Context, *, use_cache: bool = True) -> CiReport:
    """A report of one commit with no base (a push): every finding is `present`."""
    side, _ = read_side(root, head, use_cache=use_cache)
    vault = Vault(root, rev=head)
    return CiReport(ctx.event, ctx.repository, ctx.server_url, head, None, ctx.pr_number,
                    vault.prefix(), ctx.fail_on, side.notes,
                    findings=tuple(MarkedFinding("present", f) for f in side.findings),
                    orphans=len(side.orphans), gaps=len(side.gaps), fail_level=ctx.fail_level)


def compare(root: Path, base: str, head: str, ctx: Context, *, use_cache: bool = True,
            jobs: int | None = None) -> CiReport:
    """The PR report of `head` against `base` (already the merge base)."""
    head_vault, base_vault = Vault(root, rev=head), Vault(root, rev=base)
    # Parse what either side lacks once, before forking, so the two checks share the cache.
    open_store(head_vault, jobs=jobs, use_cache=use_cache)
    open_store(base_vault, jobs=jobs, use_cache=use_cache)
    parallel = use_cache and (jobs if jobs is not None else os.cpu_count() or 1) > 1
    pool: ProcessPoolExecutor | None = None
    pending: Future[Side] | None = None
    if parallel:
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
        pending = pool.submit(_base_side, root, base, use_cache)
    try:
        changes = changes_between(root, base, head)
        head_side, graph = read_side(root, head, use_cache=use_cache, jobs=1, base=base,
                                     changes=changes)
        handover, notices = _handover(head_vault, base, head, use_cache)
        base_side = pending.result() if pending is not None else _base_side(root, base,
                                                                               use_cache)
    finally:
        if pool is not None:
            pool.shutdown()
    renames = {c.old_path: c.path for c in changes if c.kind == "renamed" and c.old_path}
    concepts = pr_concepts(head_vault, base_vault, use_cache=use_cache)
    marked = match_findings(base_side.findings, head_side.findings, renames,
                            lambda path: added_lines(root, base, head, path))
    old_orphans = {renames.get(o.path, o.path) for o in base_side.orphans}
    new_orphans = {o.path for o in head_side.orphans}
    base_gaps = {g.key for g in base_side.gaps}
    head_gaps = {g.key for g in head_side.gaps}
    changed = changed_notes(changes, head_vault)
    nodes, edges = graph.neighbourhood(changed, MAX_GRAPH_NODES)
    sections = judging_changes(base_vault.config, head_vault.config) \
        if config_changed(changes) else []
    unseen: tuple[MarkedFinding, ...] = ()
    if sections:
        # The head judged by the base's settings: what the PR's own settings stopped
        # reporting is listed beside the verdict (a PR can switch a check off).
        was, _ = read_side(root, head, use_cache=use_cache, jobs=1, base=base,
                           changes=changes, config=base_vault.config)
        now = {policy_key(m.finding) for m in marked if m.status != "fixed"}
        unseen = tuple(m for m in match_findings(
            base_side.findings, was.findings, renames,
            lambda path: added_lines(root, base, head, path))
            if m.status == "new" and policy_key(m.finding) not in now)
    return CiReport(
        ctx.event, ctx.repository, ctx.server_url, head, base, ctx.pr_number,
        head_vault.prefix(), ctx.fail_on, head_side.notes, tuple(changes), marked,
        new_orphans=tuple(o for o in head_side.orphans if o.path not in old_orphans),
        fixed_orphans=tuple(sorted(old_orphans - new_orphans)),
        orphans=len(head_side.orphans),
        new_gaps=tuple(g for g in head_side.gaps if g.key not in base_gaps
                       and not _broken_by_pr(g, head_side.broken)),
        closed_gaps=tuple(g.target for g in base_side.gaps if g.key not in head_gaps),
        gaps=sum(1 for g in head_side.gaps if not _broken_by_pr(g, head_side.broken)),
        handover=handover,
        notices=notices + _fix_hint(head_side, base),
        graph=GraphView(tuple(nodes), tuple(p for p in nodes if p in changed),
                        tuple(edges)),
        new_concepts=concepts.new, closed_concepts=tuple(c.name for c in concepts.closed),
        fail_level=ctx.fail_level,
        policy=PolicyChange(tuple(sections), unseen) if sections else None,
    )


def match_findings(base: Iterable[Finding], head: Iterable[Finding],
                   renames: Mapping[str, str],
                   added: AddedLines | None = None) -> tuple[MarkedFinding, ...]:
    """Every head finding as new or pre-existing, every unmatched base finding as fixed
    (`checks.findingmatch`, the matcher the hook uses too)."""
    return tuple(MarkedFinding(status, f) for status, f in mark(base, head, renames, added))


def _handover(vault: Vault, base: str, head: str, use_cache: bool
              ) -> tuple[HandoverSummary | None, tuple[str, ...]]:
    try:
        pr = pr_report(vault, base, head, use_cache=use_cache)
    except KbaseError as exc:
        return None, (f"Handover completeness was not assessed: {exc}",)
    notes = tuple(HandoverNote(s.path, s.score, s.status,
                               tuple(HandoverItem(m.code, m.message, m.line) for m in s.missing))
                  for s in pr.handovers)
    items = tuple(HandoverItem(m.code, m.message, m.line) for m in pr.missing)
    return HandoverSummary(pr.score, vault.config.handover.threshold, notes, items), ()


def _broken_by_pr(gap: Gap, broken: frozenset[tuple[str, int, int]]) -> bool:
    """A gap every link of which a rename or deletion in the PR broke: the report names
    that cause at each link, and the target is no note to write."""
    return bool(gap.sources) and all((s.path, s.line, s.col) in broken for s in gap.sources)


def _fix_hint(side: Side, base: str) -> tuple[str, ...]:
    if not side.renames:
        return ()
    return (f"{side.renames} link(s) broken by notes renamed in this PR: `kbase fix --base "
            f"{base[:12]}` rewrites them to the new names (`--suggestions` also renamed "
            "headings).",)


def changed_notes(changes: Sequence[FileChange], vault: Vault) -> list[str]:
    return [c.path for c in changes if c.kind != "deleted" and vault.note(c.path) is not None]
