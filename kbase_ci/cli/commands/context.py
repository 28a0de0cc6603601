"""`kbase context`: the notes an agent should read about a note or a question, ranked by
link distance, backlinks and relevance, cut to a token budget at section boundaries."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK, UsageError


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "context", help="a token-budgeted reading bundle around a note or a question",
        description="Bidirectional link traversal from NOTE (or from the top search hits "
                    "for --query), hubs damped, cut to --max-tokens at section boundaries "
                    "(conservative offline token estimate; see docs/context.md). "
                    "Exit 0 notes, 1 nothing found, 2 no such note or bad arguments.")
    p.add_argument("note", nargs="?", default=None, metavar="NOTE",
                   help="note path, name or alias to start from")
    p.add_argument("--query", default=None, metavar="Q",
                   help="start from the best search hits for Q instead of a note")
    p.add_argument("--strategy", choices=("breadth", "importance", "tags"),
                   default="breadth",
                   help="breadth: nearest first; importance: best score first (backlinks "
                        "weigh more); tags: also follow notes sharing tags "
                        "(default: %(default)s)")
    p.add_argument("--depth", default="standard", metavar="quick|standard|deep|N",
                   help="quick: 1 hop, 3 notes; standard: 2 hops, 7 notes; deep: 3 hops, "
                        "20 notes; N: N hops (default: %(default)s)")
    p.add_argument("--follow-tags", action="append", default=[], metavar="T",
                   help="notes with tag T (or below it) join the traversal; repeatable "
                        "(with --strategy tags the default is the start notes' tags)")
    p.add_argument("--concise", action="store_true",
                   help="which notes and sections to read, without their text")
    add_common(p, max_tokens=8000)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.context import context_answer, text_lines

    if (args.note is None) == (args.query is None):
        raise UsageError("give a NOTE or --query Q (one of them)")
    view = open_view(args)
    answer = context_answer(view, note=args.note, query=args.query, strategy=args.strategy,
                            depth=args.depth, max_tokens=args.max_tokens,
                            follow_tags=args.follow_tags, concise=args.concise,
                            json_budget=args.format == "json")
    emit(args, answer, text_lines, budgeted=True)  # the bundle keeps to the budget
    return EXIT_OK if answer["notes"] else EXIT_FINDINGS
