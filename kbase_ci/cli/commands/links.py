"""`kbase links`: the links a note makes, with line and sentence."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "links", help="links from a note (path null: referenced, not yet written)",
        description="Exit 0 links found, 1 none, 2 no such note.")
    p.add_argument("note", metavar="NOTE")
    add_common(p)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.links import links_answer

    view = open_view(args)
    answer = links_answer(view, view.lookup(args.note))
    emit(args, answer, [f"{lk['line']}: {link_label(lk)}  {lk['sentence']}"
                        for lk in answer["links"]])
    return EXIT_OK if answer["links"] else EXIT_FINDINGS


_WHY = {"unresolved": "not yet written", "external": "external", "escapes": "outside the vault",
        "out_of_scope": "outside this scope"}


def link_label(link: dict[str, Any]) -> str:
    """A link's target for people: its path, or why there is none, and the text written."""
    if link["path"]:
        return str(link["path"])
    return f"({_WHY.get(str(link['status']), str(link['status']))}) {link['raw']}"
