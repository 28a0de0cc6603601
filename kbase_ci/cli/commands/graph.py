"""`kbase graph`: shortest paths, neighbourhoods, hubs, clusters and orphans of the link
graph, as JSON, text, or a Mermaid/DOT picture."""

from __future__ import annotations

import argparse
import sys
from itertools import pairwise
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK

FORMATS = ("json", "text", "mermaid", "dot")


def _common(a: argparse.ArgumentParser) -> None:
    a.add_argument("--concise", action="store_true",
                   help="paths and numbers only: no titles, no edges")
    add_common(a, FORMATS)


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "graph", help="paths, neighbourhoods, hubs, clusters and orphans of the link graph",
        description="Questions about the whole link graph (links between notes, from the "
                    "index with the work tree's changes overlaid). Exit 0 results, 1 none "
                    "(no path, no orphans, ...), 2 bad arguments or no such note.")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    a = acts.add_parser("path", help="shortest link path between two notes")
    a.add_argument("source", metavar="A")
    a.add_argument("target", metavar="B")
    a.add_argument("--directed", action="store_true",
                   help="follow links only from the note holding them (default: either way)")
    a.add_argument("--all", dest="all_paths", action="store_true",
                   help="every shortest path, up to --limit")
    a.add_argument("--limit", type=int, default=20, help="paths with --all (default: 20)")
    _common(a)
    a = acts.add_parser("neighborhood", aliases=["neighbourhood"],
                        help="notes within N links of a note")
    a.add_argument("note", metavar="NOTE")
    a.add_argument("--depth", type=int, default=1, help="hops (default: 1)")
    a.add_argument("--directed", action="store_true", help="follow outgoing links only")
    a.add_argument("--limit", type=int, default=200, help="most notes shown (default: 200)")
    _common(a)
    a = acts.add_parser("hubs", help="best-linked notes (links in + out)")
    a.add_argument("--min-links", type=int, default=3, help="least links (default: 3)")
    a.add_argument("--limit", type=int, default=20, help="most notes, 0 = all (default: 20)")
    _common(a)
    a = acts.add_parser("clusters", help="communities of linked notes")
    a.add_argument("--min-size", type=int, default=3, help="least notes (default: 3)")
    a.add_argument("--limit", type=int, default=20,
                   help="most clusters, 0 = all (default: 20)")
    _common(a)
    a = acts.add_parser("orphans", help="notes with no links in or out")
    a.add_argument("--no-backlinks", action="store_true",
                   help="every note nobody links to (it may link out)")
    _common(a)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query import graphanswer as ga

    view = open_view(args)
    action = "neighborhood" if args.action == "neighbourhood" else args.action
    params: dict[str, Any] = {
        "path": lambda: {"source": args.source, "target": args.target,
                         "directed": args.directed, "all_paths": args.all_paths,
                         "limit": args.limit},
        "neighborhood": lambda: {"note": args.note, "depth": args.depth,
                                 "directed": args.directed, "limit": args.limit},
        "hubs": lambda: {"min_links": args.min_links, "limit": args.limit},
        "clusters": lambda: {"min_size": args.min_size, "limit": args.limit},
        "orphans": lambda: {"no_backlinks": args.no_backlinks},
    }[action]()
    answer = ga.graph_answer(view, action, concise=args.concise, **params)
    if action == "path":
        found = bool(answer["paths"])
    elif action == "clusters":
        found = bool(answer["clusters"])
    else:  # a neighbourhood always holds its own note
        found = len(answer["nodes"]) > (1 if action == "neighborhood" else 0)
    if args.format in ("mermaid", "dot"):
        # Lazy: `kbase --help` builds every command's parser; the library loads on use.
        from kbase_ci.query.graphdraw import dot, mermaid

        sys.stdout.write(mermaid(answer) if args.format == "mermaid" else dot(answer))
    else:
        emit(args, answer, text_lines(answer))
    return EXIT_OK if found else EXIT_FINDINGS


def _arrow(answer: dict[str, Any], a: str, b: str) -> str:
    if "edges" not in answer:  # --concise
        return "-"
    links = {(e["source"], e["target"]) for e in answer["edges"]}
    there, back = (a, b) in links, (b, a) in links
    return "<->" if there and back else "->" if there else "<-"


def text_lines(answer: dict[str, Any]) -> list[str]:
    action = answer["action"]
    if action == "path":
        if not answer["paths"]:
            return [f"no link path from {answer['from']} to {answer['to']}"]
        out = [f"{answer['length']} hop(s) from {answer['from']} to {answer['to']}"]
        for p in answer["paths"]:
            out.append("  " + p[0] + "".join(f" {_arrow(answer, a, b)} {b}"
                                             for a, b in pairwise(p)))
        if answer["truncated"]:
            out.append("  (more shortest paths; raise --limit)")
        return out
    if action == "neighborhood":
        out = [f"{n['depth']}  {n['path']}" for n in answer["nodes"]]
        return out + (["(truncated; raise --limit)"] if answer["truncated"] else [])
    if action == "hubs":
        return [f"{n['degree']:>5}  in {n['incoming']:<4} out {n['outgoing']:<4} {n['path']}"
                for n in answer["nodes"]]
    if action == "clusters":
        out = []
        for c in answer["clusters"]:
            out.append(f"cluster {c['id']}: {c['size']} notes, central {c['central']}; "
                       f"terms: {', '.join(c['terms']) or '-'}")
            out.extend(f"  {m}" for m in c["members"])
        return out
    return [f"{n['path']}  " + ("isolated" if n["isolated"]
                                else f"links out to {n['outgoing']} note(s)")
            for n in answer["nodes"]]
