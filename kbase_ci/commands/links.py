"""`kbase links`: the links a note makes, with line and sentence."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import EXIT_FINDINGS, EXIT_OK
from .queryargs import add_common, emit, open_view


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "links", help="links from a note (path null: referenced, not yet written)",
        description="Exit 0 links found, 1 none, 2 no such note.")
    p.add_argument("note", metavar="NOTE")
    add_common(p)


def run(args: argparse.Namespace) -> int:
    from ..query.links import links_answer

    view = open_view(args)
    answer = links_answer(view, view.lookup(args.note))
    emit(args, answer, [f"{lk['line']}: {lk['path'] or '(not yet written) ' + lk['raw']}"
                        f"  {lk['sentence']}" for lk in answer["links"]])
    return EXIT_OK if answer["links"] else EXIT_FINDINGS
