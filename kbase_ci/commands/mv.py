"""`kbase mv OLD NEW`: `git mv` a note and rewrite every link to it, like Obsidian does."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from .. import gitio
from ..errors import EXIT_OK, UsageError
from ..fixer import apply_fixes, plan_move
from ..report import display_path
from . import open_vault
from .fix import print_report


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "mv", help="rename or move a note and update every link to it",
        description="`git mv OLD NEW`, then rewrite every link in the vault that the move "
                    "would break (in other notes and in the moved note itself), keeping each "
                    "link's style. Rewritten files are staged unless they already had "
                    "unstaged changes. Refuses (exit 2) when OLD is not a tracked note or "
                    "NEW exists.")
    p.add_argument("old", metavar="OLD", help="the note to move (a tracked .md file)")
    p.add_argument("new", metavar="NEW", help="its new path (must not exist)")
    p.add_argument("--dry-run", action="store_true",
                   help="print what would be rewritten; move nothing")


def run(args: argparse.Namespace) -> int:
    vault = open_vault(args)
    if vault.repo_root is None:
        raise UsageError("kbase mv needs a git repository")
    old, new = vault.relative(args.old), vault.relative(args.new)
    if old is None or old.startswith("../") or vault.note(old) is None:
        raise UsageError(f"{args.old} is not a tracked note of this vault")
    if new is None or new.startswith("../") or new == "..":
        raise UsageError(f"{args.new} is outside the vault {vault.root}")
    if any(part.lower() == ".git" for part in new.split("/")):
        # `git mv` would move the note into git's own folder (deleting it from the vault).
        raise UsageError(f"{args.new} is inside a .git folder")
    if os.path.lexists(vault.root / new) or new in vault.files:
        raise UsageError(f"{args.new} already exists")
    if not vault.is_note_path(new):
        raise UsageError(f"{args.new} is not a note path: it must end in .md and lie in the "
                         "vault's folders")
    if not (vault.root / old).is_file():
        raise UsageError(f"{args.old} is missing from the work tree")
    dirty = gitio.modified_in_worktree(vault.root)
    broken = plan_move(vault, old, new)
    if not args.dry_run:
        (vault.root / new).parent.mkdir(parents=True, exist_ok=True)
        gitio.git(["mv", "--", old, new], vault.root)
    report = apply_fixes(vault, broken, dry_run=args.dry_run)
    if args.dry_run:
        print(f"would move {old} -> {new}")
    else:
        print(f"moved {old} -> {new}")
    print_report(report, vault.root, dry_run=args.dry_run)
    if args.dry_run:
        return EXIT_OK
    was = {p: (old if p == new else p) for p in report.changed}
    stage = [p for p in report.changed if was[p] not in dirty]
    kept = [p for p in report.changed if was[p] in dirty]
    if stage:
        gitio.git(["add", "--", *stage], vault.root)
    if kept:
        print("left unstaged (they had unstaged changes before): "
              + ", ".join(display_path(vault.root, p) for p in kept), file=sys.stderr)
    return EXIT_OK
