"""`kbase prerequisites NOTE`: what to read before a note (from links and folders)."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, add_timeout, emit, open_view
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "prerequisites", help="what to read before a note, foundations first (no model)",
        description="The notes a note builds on: the notes it links to that more notes "
                    "link to (the more basic ones), its folder's overview note, and theirs "
                    "in turn up to --depth, listed so that each comes after what it needs. "
                    "Exit 0 some found, 1 none, 2 no such note.")
    p.add_argument("note", metavar="NOTE")
    p.add_argument("--depth", type=int, default=2,
                   help="steps back through prerequisites (default: %(default)s)")
    p.add_argument("--limit", type=int, default=20, help="most notes listed (default: 20)")
    add_timeout(p)
    add_common(p)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.readingorder import prerequisites_answer
    from kbase_ci.query.trace import Deadline

    deadline = Deadline(args.timeout)
    view = open_view(args)
    answer = prerequisites_answer(view, args.note, depth=args.depth, limit=args.limit,
                                  deadline=deadline)
    emit(args, answer, _lines)
    return EXIT_OK if answer["prerequisites"] else EXIT_FINDINGS


def _lines(answer: dict[str, Any]) -> list[str]:
    lines = [f"{p['path']}  ({'; '.join(p['why'])}; needed by {p['via']})"
             for p in answer["prerequisites"]]
    lines.append(f"then: {answer['note']}")
    if answer["partial"]:
        lines.append(f"(partial: {answer['partial_reason']})")
    return lines
