"""`kbase mv`: move a note with `git mv` and rewrite every link the move would break,
like Obsidian's "automatically update internal links"."""

from __future__ import annotations

import os
from dataclasses import dataclass

from kbase_ci.checks.linkfix import FixReport, apply_fixes, plan_move
from kbase_ci.errors import UsageError
from kbase_ci.git import worktree
from kbase_ci.git.listing import modified_in_worktree
from kbase_ci.vault.files import Vault
from kbase_ci.vault.safefs import confine


@dataclass(frozen=True)
class MoveReport:
    old: str
    new: str
    """Vault-relative paths before and after the move."""
    fixes: FixReport
    staged: tuple[str, ...]
    """Rewritten files staged after the rewrite."""
    kept: tuple[str, ...]
    """Rewritten files left unstaged: they had unstaged changes before."""


def move_note(vault: Vault, old_arg: str, new_arg: str, *, dry_run: bool = False
              ) -> MoveReport:
    """Move note `old_arg` to `new_arg` (as the user typed them) and repair links."""
    if vault.repo_root is None:
        raise UsageError("kbase mv needs a git repository")
    old, new = vault.relative(old_arg), vault.relative(new_arg)
    if old is None or old.startswith("../") or vault.note(old) is None:
        raise UsageError(f"{old_arg} is not a tracked note of this vault")
    if new is None or new.startswith("../") or new == "..":
        raise UsageError(f"{new_arg} is outside the vault {vault.root}")
    # Not through a symbolic link (out of the repository), not into .git, a submodule or
    # the index folder (`kbase index` replaces it whole). The old path is git's: it
    # tracks nothing beyond a link, and moving a note out of `.kbase/` rescues it.
    confine(vault.root, new, gitlinks=vault.gitlinks, what="destination")
    if os.path.lexists(vault.root / new) or new in vault.files:
        raise UsageError(f"{new_arg} already exists")
    if not vault.is_note_path(new):
        raise UsageError(f"{new_arg} is not a note path: it must end in .md and lie in the "
                         "vault's folders")
    if not (vault.root / old).is_file():
        raise UsageError(f"{old_arg} is missing from the work tree")
    dirty = modified_in_worktree(vault.root)
    broken = plan_move(vault, old, new)
    if not dry_run:
        (vault.root / new).parent.mkdir(parents=True, exist_ok=True)
        worktree.move(vault.root, old, new)
    fixes = apply_fixes(vault, broken, dry_run=dry_run)
    if dry_run:
        return MoveReport(old, new, fixes, (), ())
    was = {p: (old if p == new else p) for p in fixes.changed}
    stage = tuple(p for p in fixes.changed if was[p] not in dirty)
    kept = tuple(p for p in fixes.changed if was[p] in dirty)
    worktree.stage(vault.root, stage)
    return MoveReport(old, new, fixes, stage, kept)
