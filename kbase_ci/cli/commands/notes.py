"""`kbase notes`: notes by tag (hierarchies respected) and domain."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "notes", help="notes with given tags and domain",
        description="Notes having every --tag (a tag matches the tags below it: rust "
                    "matches rust/async), or any of them with --any. "
                    "Exit 0 notes found, 1 none, 2 error.")
    p.add_argument("--tag", action="append", default=[], metavar="T",
                   help="tag T or a tag under it (T/...); repeatable")
    p.add_argument("--any", dest="any_tag", action="store_true",
                   help="notes with any of the tags (default: all of them)")
    p.add_argument("--domain", default=None, help="only notes of this domain")
    add_common(p)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.tagtree import notes_answer

    view = open_view(args)
    answer = notes_answer(view, tags=args.tag, any_tag=args.any_tag, domain=args.domain)
    emit(args, answer, lambda a: [f"{n['path']}  " + " ".join(f"#{t}" for t in n["tags"])
                                  for n in a["notes"]])
    return EXIT_OK if answer["notes"] else EXIT_FINDINGS
