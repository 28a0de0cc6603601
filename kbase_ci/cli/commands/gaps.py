"""`kbase gaps`: notes to write, undocumented recurring concepts, missing attachments."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK, UsageError

KINDS = ("note", "concept", "attachment")  # as kbase_ci.query.gaps.KINDS, without importing it
_TITLES = {"note": ("unwritten", "notes to write (unresolved link targets)"),
           "concept": ("concepts", "undocumented concepts"),
           "attachment": ("attachments", "missing attachments")}


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "gaps", help="notes worth writing: unwritten link targets, undocumented concepts, "
                     "missing attachments",
        description="Three ranked lists: notes that links point to but nobody wrote "
                    "(most referring notes first, then most links), terms (backticked "
                    "identifiers, capitalised names) that recur across notes but match no "
                    "title, alias or heading (widest spread first), and attachments links "
                    "name that are missing. Exit 0 gaps found, 1 none, 2 usage error.")
    p.add_argument("--kind", action="append", choices=KINDS, default=None,
                   help="only this kind of gap; repeatable (default: all three, in this "
                        "order: note, concept, attachment)")
    p.add_argument("--domain", default=None, metavar="D",
                   help="only notes of this domain (top-level folder, or the index.domain "
                        "frontmatter value)")
    p.add_argument("--limit", type=int, default=20, metavar="N",
                   help="entries per list (default: %(default)s)")
    p.add_argument("--min-notes", type=int, default=3, metavar="N",
                   help="notes a concept must appear in (default: %(default)s)")
    p.add_argument("--concise", action="store_true",
                   help="targets and concepts with their counts, not where they are")
    add_common(p)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.gaps import gaps_answer

    if args.limit < 1 or args.min_notes < 1:
        raise UsageError("--limit and --min-notes must be at least 1")
    view = open_view(args)
    answer = gaps_answer(view, kinds=args.kind or KINDS, domain=args.domain,
                         limit=args.limit, min_notes=args.min_notes,
                         concise=args.concise)
    emit(args, answer, text_lines)
    return EXIT_OK if any(answer[_TITLES[k][0]] for k in answer["kinds"]) else EXIT_FINDINGS


def text_lines(answer: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for kind in answer["kinds"]:
        key, title = _TITLES[kind]
        if kind == "concept":
            title += f" (in >= {answer['min_notes']} notes)"
        lines.append(f"{title}: {answer['counts'][key]}")
        for g in answer[key]:
            if kind == "concept":
                lines.append(f"  {g['name']}  ({_count(g['notes'], 'note')})")
                places = g.get("places", ())
            else:
                lines.append(f"  {g['target']}  ({_count(g['notes'], 'note')}, "
                             f"{_count(g['references'], 'link')})")
                places = g.get("referrers", ())
            lines += [f"    {p['path']}:{p['line']}: {p['sentence']}" for p in places]
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
