"""`kbase read`: a note, a section (`NOTE#heading`) or a block (`NOTE#^id`)."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_OK


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "read", help="print a note, one section or one block",
        description="NOTE is a path, a note name or an alias, optionally followed by "
                    "#heading or #^block. Exit 0 found, 2 no such note.")
    p.add_argument("note", metavar="NOTE[#heading|#^block]")
    p.add_argument("--expand-links", action="store_true",
                   help="also return the notes it links to")
    p.add_argument("--depth", type=int, default=1, help="link depth for --expand-links")
    add_common(p)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.read import read_answer

    view = open_view(args)
    answer = read_answer(view, args.note, expand=args.expand_links, depth=args.depth)
    emit(args, answer, _lines)
    return EXIT_OK


def _lines(answer: dict[str, Any]) -> list[str]:
    lines = [answer["text"]]
    for item in answer["linked"]:
        lines += ["", f"--- {item['path']} (depth {item['depth']})", item["text"]]
    return lines
