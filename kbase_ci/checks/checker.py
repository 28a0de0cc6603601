"""`kbase check` as a library call: scan the vault, run the selected checks, return records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kbase_ci.checks import checkregistry as checks
from kbase_ci.checks.configchange import (
    affected_notes,
    config_changed,
    head_config,
    judging_changes,
    policy_key,
)
from kbase_ci.checks.fixmemo import sort_out
from kbase_ci.checks.hookbatch import staged_share
from kbase_ci.checks.notechanges import NoteChanges
from kbase_ci.checks.stagedchanges import load_change
from kbase_ci.git.diff import FileChange
from kbase_ci.parsed import Finding, Severity
from kbase_ci.vault.notefiles import Vault, VaultMode
from kbase_ci.vault.scanner import ScanStats, open_store


@dataclass(frozen=True)
class CheckReport:
    """The result of a check run: findings, and what was looked at."""

    findings: tuple[Finding, ...]
    notes: int
    """Notes in the vault (what resolution used)."""
    checked: int
    """Notes reported on (the focus)."""
    mode: VaultMode
    ignored_args: tuple[str, ...]
    """File arguments that are not notes of this vault (outside it, excluded, untracked)."""
    scan: ScanStats
    fixed: tuple[Finding, ...] = ()
    """Link findings of staged notes that `kbase fix` already rewrote in the work tree in
    this hook run (`fixmemo`): not repeated, but the commit still fails until staged."""
    pre_existing: tuple[Finding, ...] = ()
    """Hook mode (new-only): findings HEAD already had; reported as a count, not failing."""
    new_only: bool = False
    """`findings` are what this commit introduces (the rest are `pre_existing`)."""
    untracked: tuple[str, ...] = ()
    """File arguments checked although git does not track them (work-tree mode)."""
    policy_sections: tuple[str, ...] = ()
    """Hook mode: the `.kbase.yml` sections this commit changes that judge notes."""
    policy_unseen: tuple[Finding, ...] = ()
    """Hook mode: what HEAD's settings would report as new in this commit and the
    staged settings do not (a commit can switch a check off: it is then said)."""

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == "warning")

    def failing(self, fail_on: Severity = "error") -> int:
        """Findings that fail the run: errors, and warnings too with `fail_on="warning"`."""
        return sum(1 for f in self.findings if fail_on == "warning" or f.severity == "error")


def check_vault(vault: Vault, files: Sequence[str] | None = None, *,
                select: Sequence[str] = (), ignore: Sequence[str] = (),
                jobs: int | None = None, use_cache: bool = True,
                changes: Sequence[FileChange] | None = None,
                new_only: bool = False, probe: bool = True) -> CheckReport:
    """Check `files` (paths as given on a command line), or every note when None.

    With `changes` (the staged change set: hook mode) links this commit breaks in other
    notes are reported too, `files=[]` means the staged notes (see `hookbatch`), a
    staged `.kbase.yml` adds the notes its changes can affect (`configchange`), and
    `new_only` keeps only the findings HEAD did not have (`newonly`). When the staged
    `.kbase.yml` judges notes otherwise than HEAD's, the commit is checked again under
    HEAD's settings (`probe`) and what only they find is returned beside the findings.
    """
    cfg = vault.config.checks
    policy = checks.make_policy(vault.config, vault.root)  # a located KB900 before `select`
    selected = checks.select([*cfg.select, *select], [*cfg.ignore, *ignore])
    ignored: list[str] = []
    focus: set[str] | None = None
    change: NoteChanges | None = None
    if changes is not None and files is not None:
        scope = staged_share(vault, changes, files)
        focus, ignored = set(scope.focus), list(scope.ignored)
        change = load_change(vault, changes, inbound=scope.inbound, elsewhere=scope.elsewhere)
    elif changes is not None:
        change = load_change(vault, changes)
    elif files is not None:
        chosen, ignored = vault.select(files)
        focus = {n.path for n in chosen}
    untracked: list[str] = []
    if ignored and changes is None and vault.mode == "git-worktree":
        # `kbase check NEW.md` before `git add`: named, so checked (the listing then
        # holds the work tree's untracked notes, as Obsidian sees them).
        cfg_all = vault.config._replace(vault=vault.config.vault._replace(untracked=True))
        wider = Vault(vault.root, cfg_all, untracked=True)
        extra, ignored = wider.select(ignored)
        if extra:
            vault, untracked = wider, [n.path for n in extra]
            focus = (focus or set()) | set(untracked)
    # A store, not a list: a hook on one note must not decode every cached note. A hook
    # in a fresh clone takes the notes it does not decode from a published index.
    notes, stats = open_store(vault, jobs=jobs, use_cache=use_cache,
                              hints=changes is not None)
    new_config = changes is not None and config_changed(changes)
    if new_config and focus is not None and (change is None or change.inbound):
        skip = change.elsewhere if change is not None else frozenset()
        focus |= {p for p in affected_notes(vault, notes) if p not in skip}
    ctx = checks.CheckContext(notes, vault.files, vault.config, focus, vault=vault,
                              change=change)
    ctx.policy = policy
    wanted = focus is None or focus or (change is not None and change.inbound)
    found = checks.run_checks(ctx, selected) if wanted else []
    fixed: tuple[Finding, ...] = ()
    pre: tuple[Finding, ...] = ()
    if changes is not None and found:
        parts = sort_out(vault, found)
        found, fixed = list(parts.kept), parts.fixed
        if new_only:
            # Lazy: a commit that leaves no finding never asks HEAD (hook start-up).
            from kbase_ci.checks.newonly import split_new

            split = split_new(vault, ctx, found, select=select, ignore=ignore,
                              same_config=not new_config)
            found, pre = list(split.new), split.pre_existing
    sections: list[str] = []
    unseen: tuple[Finding, ...] = ()
    if new_config and probe and changes is not None:
        before = head_config(vault)
        sections = judging_changes(before, vault.config) if before is not None else []
        if sections and before is not None:
            # The same commit under HEAD's settings: what the new ones stopped reporting.
            was = check_vault(Vault(vault.root, before, staged=True), files, select=select,
                              ignore=ignore, jobs=jobs, use_cache=use_cache,
                              changes=changes, new_only=new_only, probe=False)
            now = {policy_key(f) for f in (*found, *pre)}
            unseen = tuple(f for f in was.findings if policy_key(f) not in now)
    return CheckReport(
        findings=tuple(found), notes=len(notes), checked=len(ctx.checked), mode=vault.mode,
        ignored_args=tuple(ignored), scan=stats, fixed=fixed, pre_existing=pre,
        new_only=new_only and changes is not None, untracked=tuple(untracked),
        policy_sections=tuple(sections), policy_unseen=unseen,
    )
