"""`kbase check` as a library call: scan the vault, run the selected checks, return records."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import checks
from .model import Finding
from .scanner import ScanStats, scan
from .vault import Vault, VaultMode


@dataclass(frozen=True)
class CheckReport:
    findings: tuple[Finding, ...]
    notes: int
    """Notes in the vault (what resolution used)."""
    checked: int
    """Notes reported on (the focus)."""
    mode: VaultMode
    ignored_args: tuple[str, ...]
    """File arguments that are not notes of this vault (outside it, excluded, untracked)."""
    scan: ScanStats

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == "warning")


def check_vault(vault: Vault, files: Sequence[str] | None = None, *,
                select: Sequence[str] = (), ignore: Sequence[str] = (),
                jobs: int | None = None, use_cache: bool = True) -> CheckReport:
    """Check `files` (paths as given on a command line), or every note when None."""
    cfg = vault.config.checks
    selected = checks.select([*cfg.select, *select], [*cfg.ignore, *ignore])
    ignored: list[str] = []
    focus: set[str] | None = None
    if files is not None:
        chosen, ignored = vault.select(files)
        focus = {n.path for n in chosen}
    notes, stats = scan(vault, jobs=jobs, use_cache=use_cache)
    ctx = checks.CheckContext(notes, vault.files, vault.config, focus)
    found = checks.run_checks(ctx, selected) if focus is None or focus else []
    return CheckReport(
        findings=tuple(found), notes=len(notes), checked=len(ctx.focus), mode=vault.mode,
        ignored_args=tuple(ignored), scan=stats,
    )
