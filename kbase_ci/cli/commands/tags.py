"""`kbase tags`: notes per tag and per branch of the tag tree, and tags used together."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "tags", help="tag counts, the tag tree and co-occurring tags",
        description="count = notes with the tag itself, total = with it or a tag below "
                    "it. Exit 0 tags found, 1 no tags, 2 error.")
    p.add_argument("--tree", action="store_true", help="the tag hierarchy")
    p.add_argument("--stats", action="store_true", help="pairs of tags used together")
    p.add_argument("--limit", type=int, default=50,
                   help="pairs with --stats, 0 = all (default: 50)")
    add_common(p)
    acts = p.add_subparsers(dest="action", metavar="ACTION")
    s = acts.add_parser("suggest", help="tags a note probably lacks, from similar notes",
                        description="Tags of the notes most like NOTE (similar notes from "
                                    "the index's vectors, and the notes it links with) that "
                                    "NOTE lacks, scored by how many of them carry the tag "
                                    "and how rare it is. Exit 0 suggestions, 1 none, 2 no "
                                    "such note.")
    s.add_argument("note", metavar="NOTE")
    s.add_argument("--limit", type=int, default=5, help="most tags (default: 5)")
    add_common(s)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.errors import UsageError
    from kbase_ci.query.tagtree import tags_answer

    if getattr(args, "action", None) == "suggest":
        return _suggest(args)
    if args.limit < 0:
        raise UsageError(f"--limit must be at least 0, not {args.limit}")
    view = open_view(args)
    answer = tags_answer(view, tree=args.tree, stats=args.stats, limit=args.limit)
    emit(args, answer, text_lines)
    return EXIT_OK if answer["tags"] else EXIT_FINDINGS


def _suggest(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.tagsuggest import suggest_answer

    answer = suggest_answer(open_view(args), args.note, limit=args.limit)
    emit(args, answer, lambda a: [f"#{s['tag']}  {s['score']}  (from {', '.join(s['from'])})"
                                  for s in a["suggestions"]])
    return EXIT_OK if answer["suggestions"] else EXIT_FINDINGS


def text_lines(answer: dict[str, Any]) -> list[str]:
    out: list[str] = []
    if "tree" in answer:
        def walk(nodes: list[dict[str, Any]], depth: int) -> None:
            for n in nodes:
                out.append(f"{'  ' * depth}{n['name']}  {n['total']}"
                           + (f" ({n['count']} exact)" if n["count"] != n["total"] else ""))
                walk(n["children"], depth + 1)
        walk(answer["tree"], 0)
    else:
        out.extend(f"{t['total']:>6} {t['count']:>6}  #{t['tag']}" for t in answer["tags"])
    if "cooccurrence" in answer:
        out.append("tags used together:")
        out.extend(f"{p['count']:>6}  #{p['a']} + #{p['b']}" for p in answer["cooccurrence"])
    return out
