"""`kbase mv`: move a note with `git mv` and rewrite every link the move would break,
like Obsidian's "automatically update internal links"."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kbase_ci.checks.linkfix import FixReport, apply_fixes, plan_move
from kbase_ci.errors import GitError, UsageError
from kbase_ci.git import worktree
from kbase_ci.git.listing import modified_in_worktree
from kbase_ci.state.files import replace
from kbase_ci.vault.notefiles import Vault
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
        made = _make_folders(vault.root, new)
        try:
            worktree.move(vault.root, old, new)
        except GitError as exc:
            raise _undone(vault.root, old, new, made, exc) from None
    fixes = apply_fixes(vault, broken, dry_run=dry_run)
    if dry_run:
        return MoveReport(old, new, fixes, (), ())
    was = {p: (old if p == new else p) for p in fixes.changed}
    stage = tuple(p for p in fixes.changed if was[p] not in dirty)
    kept = tuple(p for p in fixes.changed if was[p] in dirty)
    try:
        worktree.stage(vault.root, stage)
    except GitError as exc:  # the move is recorded; the rewrites are in the work tree
        raise GitError(f"moved {old} -> {new} and rewrote the links in "
                       f"{', '.join(fixes.changed)}, but could not stage them ({exc}); "
                       f"finish with `git add -- {' '.join(stage)}`") from None
    return MoveReport(old, new, fixes, stage, kept)


def _make_folders(root: Path, rel: str) -> list[Path]:
    """The folders `rel` needs that do not exist yet, made; the deepest first."""
    made: list[Path] = []
    folder = (root / rel).parent
    while folder != root and not folder.exists():
        made.append(folder)
        folder = folder.parent
    for path in reversed(made):
        path.mkdir()
    return made


def _undone(root: Path, old: str, new: str, made: list[Path], exc: GitError) -> GitError:
    """`git mv` failed (issue 38: a full disk, after git renamed the file but before it
    could write its index, left OLD gone and NEW untracked): put the file back and say
    nothing moved, or, if that fails too, exactly what state it is in and how to finish."""
    why = str(exc).removeprefix("git mv -- failed: ").strip()
    moved = not os.path.lexists(root / old) and os.path.lexists(root / new)
    try:
        if moved:
            replace(root / new, root / old)
        for folder in made:  # deepest first; one holding anything else stays
            folder.rmdir()
    except OSError as undo:
        if moved and not os.path.lexists(root / old):
            return GitError(
                f"git mv {old} {new} failed ({why}), after renaming the file: {new} is in "
                f"the work tree, untracked, and git still lists {old}, now missing; it "
                f"could not be renamed back ({undo.strerror or undo}). Finish the move "
                f"with `git rm --cached -q -- {old} && git add -- {new}`, or undo it "
                f"with `mv -- {new} {old}`")
    return GitError(f"git mv {old} {new} failed ({why}); nothing was moved"
                    + (f" ({old} was renamed back)" if moved else ""))
