"""`kbase-ignore` comments that name no check or code (KB901). The other half of KB901,
suppressions that silenced nothing, needs every other finding first: `policy.apply`."""

from __future__ import annotations

from collections.abc import Iterator

from kbase_ci.checks.checkcontext import CheckContext
from kbase_ci.parsed import Finding


def check(ctx: CheckContext) -> Iterator[Finding]:
    notes = [n for n in ctx.focus_notes if n.suppressions]
    if notes and ctx.policy is not None:  # `run_checks` sets it before any check runs
        yield from ctx.policy.unknown_words(notes)
