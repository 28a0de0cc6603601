"""`kbase backlinks`: the notes that link to a note, with line and sentence."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "backlinks", help="notes linking to a note",
        description="Exit 0 backlinks found, 1 none, 2 no such note.")
    p.add_argument("note", metavar="NOTE")
    p.add_argument("--concise", action="store_true", help="paths and lines only")
    add_common(p)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.links import backlinks_answer

    view = open_view(args)
    answer = backlinks_answer(view, view.lookup(args.note), concise=args.concise)
    emit(args, answer, lambda a: [f"{lk['path']}:{lk['line']}  {lk.get('sentence', '')}"
                                  .rstrip() for lk in a["backlinks"]])
    return EXIT_OK if answer["backlinks"] else EXIT_FINDINGS
