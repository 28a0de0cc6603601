"""`kbase mv OLD NEW`: `git mv` a note and rewrite every link to it, like Obsidian does."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kbase_ci.checks.notemove import move_note
from kbase_ci.cli.commands.fixcmd import print_report
from kbase_ci.cli.common import open_vault
from kbase_ci.errors import EXIT_OK
from kbase_ci.report.findings import display_path


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
    moved = move_note(vault, args.old, args.new, dry_run=args.dry_run)
    print(f"{'would move' if args.dry_run else 'moved'} {moved.old} -> {moved.new}")
    print_report(moved.fixes, vault.root, dry_run=args.dry_run)
    if moved.kept:
        print("left unstaged (they had unstaged changes before): "
              + ", ".join(display_path(vault.root, p) for p in moved.kept), file=sys.stderr)
    return EXIT_OK
