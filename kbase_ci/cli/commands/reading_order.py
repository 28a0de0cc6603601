"""`kbase reading-order`: an order to read notes in, each after what it builds on."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, add_timeout, emit, open_view
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "reading-order", help="an order to read notes in, foundations first (no model)",
        description="Orders the notes (all of them, those with --tag and --domain, or "
                    "those within --depth links of --from NOTE) so that each comes after "
                    "the notes it builds on: a note linked from more notes comes before "
                    "the notes linking to it, a folder's overview before the folder. "
                    "Exit 0 notes ordered, 1 none, 2 usage error or no such note.")
    p.add_argument("--from", dest="start", default=None, metavar="NOTE",
                   help="the notes within --depth links of NOTE")
    p.add_argument("--depth", type=int, default=2, help="links from --from (default: 2)")
    p.add_argument("--tag", action="append", default=[], metavar="T",
                   help="only notes with tag T or a tag under it; repeatable")
    p.add_argument("--domain", default=None, help="only notes of this domain")
    p.add_argument("--limit", type=int, default=50, help="most notes listed (default: 50)")
    add_timeout(p)
    add_common(p)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.readingorder import reading_order_answer
    from kbase_ci.query.trace import Deadline

    deadline = Deadline(args.timeout)
    view = open_view(args)
    answer = reading_order_answer(view, tags=args.tag, domain=args.domain, start=args.start,
                                  depth=args.depth, limit=args.limit, deadline=deadline)
    emit(args, answer, _lines)
    return EXIT_OK if answer["order"] else EXIT_FINDINGS


def _lines(answer: dict[str, Any]) -> list[str]:
    lines = [f"{s['step']:>4}  {s['path']}" + (f"  (after {', '.join(s['after'])})"
                                                 if s["after"] else "")
             for s in answer["order"]]
    if answer["truncated"]:
        lines.append(f"({answer['count'] - len(answer['order'])} more; raise --limit)")
    if answer["partial"]:
        lines.append(f"(partial: {answer['partial_reason']})")
    return lines
