"""`kbase-ignore` comments that name no check or code (KB901). The other half of KB901,
suppressions that silenced nothing, needs every other finding first: `policy.apply`."""

from __future__ import annotations

from collections.abc import Iterator

from kbase_ci.checks.checkcontext import CheckContext
from kbase_ci.model import Finding


def check(ctx: CheckContext) -> Iterator[Finding]:
    from kbase_ci.checks.registry import policy_of  # the registry lists this module

    notes = [n for n in ctx.focus_notes if n.suppressions]
    if notes:
        yield from policy_of(ctx).unknown_words(notes)
