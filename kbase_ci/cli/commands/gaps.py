"""`kbase gaps`: unwritten link targets and undocumented recurring concepts."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK, UsageError


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "gaps", help="notes worth writing: unresolved link targets and undocumented concepts",
        description="Unresolved link targets ranked by how many notes link there, and "
                    "terms (backticked identifiers, capitalised names) that recur across "
                    "notes but match no title, alias or heading, ranked by spread. "
                    "Exit 0 gaps found, 1 none, 2 usage error.")
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
    answer = gaps_answer(view, domain=args.domain, limit=args.limit,
                         min_notes=args.min_notes, concise=args.concise)
    lines = [f"unresolved targets: {answer['counts']['unresolved']}"]
    for g in answer["unresolved"]:
        lines.append(f"  {g['target']}  ({g['notes']} notes, {g['references']} links)")
        lines += [f"    {r['path']}:{r['line']}: {r['sentence']}"
                  for r in g.get("referrers", ())]
    lines.append(f"undocumented concepts (in >= {args.min_notes} notes): "
                 f"{answer['counts']['concepts']}")
    for c in answer["concepts"]:
        lines.append(f"  {c['name']}  ({c['notes']} notes)")
        lines += [f"    {p['path']}:{p['line']}: {p['sentence']}" for p in c.get("places", ())]
    emit(args, answer, lines)
    return EXIT_OK if answer["unresolved"] or answer["concepts"] else EXIT_FINDINGS
