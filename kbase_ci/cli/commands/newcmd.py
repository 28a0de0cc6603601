"""`kbase new TYPE [--track T] [--title ...]`: write a dated skeleton of a typed note."""

from __future__ import annotations

import argparse
import datetime as dt
from typing import Any

from kbase_ci.cli.common import open_vault
from kbase_ci.errors import EXIT_OK, UsageError
from kbase_ci.handover.skeleton import new_note
from kbase_ci.report.findings import display_path


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "new", help="write a skeleton handover, question, answer, discovery or decision",
        description="Write a dated skeleton of a typed note into its folder (handovers: "
                    "`handover.folder`, default handovers/) and print its path. Never "
                    "overwrites: exit 2 when the file exists.")
    p.add_argument("type", metavar="TYPE",
                   help="handover, question, answer, discovery, decision, or a configured type")
    p.add_argument("--track", default=None, help="work track (frontmatter `track`)")
    p.add_argument("--title", default=None, help="title (also names the file)")
    p.add_argument("--date", default=None, metavar="YYYY-MM-DD",
                   help="date to write (default: today)")


def run(args: argparse.Namespace) -> int:
    vault = open_vault(args)
    date = None
    if args.date is not None:
        try:
            date = dt.date.fromisoformat(args.date)
        except ValueError:
            raise UsageError(f"--date must be YYYY-MM-DD, not {args.date!r}") from None
    rel = new_note(vault.root, vault.config, args.type, title=args.title, track=args.track,
                   date=date, gitlinks=vault.gitlinks)
    print(display_path(vault.root, rel))
    return EXIT_OK
