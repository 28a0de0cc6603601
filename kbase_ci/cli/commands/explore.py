"""`kbase explore`: a note's outlinks, backlinks and similar notes it is not linked with."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.links import link_label
from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_OK


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "explore", help="a note's links, backlinks and similar unlinked notes",
        description="Similar notes are precomputed in the index (no model needed). "
                    "Exit 0, 2 no such note.")
    p.add_argument("note", metavar="NOTE")
    p.add_argument("--concise", action="store_true", help="paths only")
    add_common(p)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.explore import explore_answer

    view = open_view(args)
    answer = explore_answer(view, view.lookup(args.note), concise=args.concise)

    def paths(items: list[Any]) -> str:
        return ", ".join(i if isinstance(i, str) else link_label(i) for i in items) or "-"

    emit(args, answer, lambda a: [f"note: {a['note']}",
                                  f"outlinks: {paths(a['outlinks'])}",
                                  "external: " + (", ".join(e if isinstance(e, str)
                                                            else e["url"]
                                                            for e in a["external"]) or "-"),
                                  f"backlinks: {paths(a['backlinks'])}",
                                  f"similar: {paths(a['similar'])}"])
    return EXIT_OK
