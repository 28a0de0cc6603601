"""What the subcommands share: the vault root, the staged change set, opening the vault."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from kbase_ci.errors import GitError, UsageError
from kbase_ci.git.repo import find_root, toplevel

if TYPE_CHECKING:
    from kbase_ci.git.diff import FileChange
    from kbase_ci.vault.notefiles import Vault


def vault_root(args: argparse.Namespace) -> Path:
    root: Path = args.root if args.root is not None else find_root()
    return root.resolve()


def staged_changes_for(args: argparse.Namespace, base: str | None = None
                       ) -> list[FileChange]:
    """The staged change set of the vault `args` name (`--staged`: hook mode), against
    HEAD or against commit `base`."""
    # Lazy: the diff code (~5 ms of imports) is for `--staged`; a query opens no change set.
    from kbase_ci.git.diff import staged_changes

    root = vault_root(args)
    if not root.is_dir():
        raise UsageError(f"vault folder does not exist: {root}")
    try:
        return staged_changes(root, break_rewrites=True, base=base)
    except GitError:
        if toplevel(root) is None:
            raise UsageError(f"--staged needs a git repository; {root} is not in one") from None
        raise


def open_vault(args: argparse.Namespace, *, staged: bool = False,
               untracked: bool = False) -> Vault:
    """`untracked`: untracked notes count too (readers of the work tree: queries,
    handovers), when `vault.untracked` allows."""
    from kbase_ci.vault.notefiles import Vault  # not before: a hook run without notes exits earlier
    root: Path = args.root if args.root is not None else find_root()
    return Vault(root, staged=staged, config_path=args.config, untracked=untracked)
