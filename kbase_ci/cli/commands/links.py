"""`kbase links`: the links a note makes, with line and sentence."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "links", help="links from a note (path null: referenced, not yet written; URLs "
                      "apart, in external)",
        description="The note's links with line and sentence: `links` for notes and "
                    "attachments (path null: not written yet, or outside the vault), "
                    "`external` for URLs. Exit 0 links found, 1 none, 2 no such note.")
    p.add_argument("note", metavar="NOTE")
    add_common(p)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.links import links_answer

    view = open_view(args)
    answer = links_answer(view, view.lookup(args.note))
    emit(args, answer, _lines)
    return EXIT_OK if answer["links"] or answer["external"] else EXIT_FINDINGS


def _lines(answer: dict[str, Any]) -> list[str]:
    rows = [(lk["line"], lk["col"], f"{link_label(lk)}  {lk['sentence']}")
            for lk in answer["links"]]
    rows += [(e["line"], e["col"], f"(external) {e['url']}  {e['sentence']}")
             for e in answer["external"]]
    return [f"{line}: {text}" for line, _col, text in sorted(rows)]


_WHY = {"unresolved": "not yet written", "escapes": "outside the vault",
        "out_of_scope": "outside this scope"}


def link_label(link: dict[str, Any]) -> str:
    """A link's target for people: its path, or why there is none, and the text written."""
    if link["path"]:
        return str(link["path"])
    return f"({_WHY.get(str(link['status']), str(link['status']))}) {link['raw']}"
