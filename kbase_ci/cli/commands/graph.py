"""`kbase graph`: shortest paths, neighbourhoods, hubs, clusters and orphans of the link
graph, as JSON, text, or a Mermaid/DOT picture."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, add_timeout, emit, open_view
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
    a = acts.add_parser("explore", help="a map around a note: neighbours, clusters, hubs "
                                       "and a reading path (--summary: ~500 tokens)")
    a.add_argument("note", metavar="NOTE")
    a.add_argument("--depth", type=int, default=2, help="hops (default: 2)")
    a.add_argument("--limit", type=int, default=200, help="most notes (default: 200)")
    a.add_argument("--summary", action="store_true",
                   help="a condensed map of about 500 tokens: counts, first ring, clusters, "
                        "hubs, reading path")
    a.add_argument("--stream", action="store_true",
                   help="JSON lines: one per note as it is reached, then the result")
    add_timeout(a)
    add_common(a, FORMATS)
    a = acts.add_parser("orphans", help="notes with no links in or out")
    a.add_argument("--no-backlinks", action="store_true",
                   help="every note nobody links to (it may link out)")
    _common(a)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query import graphanswer as ga

    action = "neighborhood" if args.action == "neighbourhood" else args.action
    if action == "explore":
        return _explore(args)
    view = open_view(args)
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
        _draw(args, answer)
    else:
        emit(args, answer, text_lines)
    return EXIT_OK if found else EXIT_FINDINGS


def _explore(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.errors import UsageError
    from kbase_ci.query.graphmap import explore_answer, explore_events
    from kbase_ci.query.trace import Deadline

    if (args.stream or args.summary) and args.format in ("mermaid", "dot"):
        raise UsageError("--stream and --summary print JSON or text, not a picture")
    if args.stream and args.format != "json":
        raise UsageError("--stream prints JSON lines; leave out --format text")
    deadline = Deadline(args.timeout)
    view = open_view(args)
    params = {"depth": args.depth, "limit": args.limit, "summary": args.summary,
              "deadline": deadline}
    if args.stream:
        return _stream(explore_events(view, args.note, **params), args.max_tokens)
    answer = explore_answer(view, args.note, **params)
    if args.format in ("mermaid", "dot"):
        _draw(args, answer)
    else:
        emit(args, answer, explore_lines)
    return EXIT_OK if (answer["notes"] if args.summary else answer["found"]) > (
        1 if args.summary else 0) else EXIT_FINDINGS


STREAM_END = 60
"""Tokens kept for the line that ends a stream cut by `--max-tokens`."""


def _stream(events: Iterator[dict[str, Any]], max_tokens: int | None) -> int:
    """JSON lines, each note as it is reached, then the result; with `--max-tokens`, the
    walk stops at the first line that would not fit (the result trimmed to what is left,
    when that is enough) and a last `{"type": "truncated", ...}` line says so."""
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.errors import UsageError
    from kbase_ci.query.payload import check_budget, cost, dumps, fit

    check_budget(max_tokens)
    found, used, nodes = False, 0, 0
    for event in events:
        line = dumps(event) + "\n"
        if max_tokens is not None and used + cost(line) > max_tokens - STREAM_END:
            left = max_tokens - STREAM_END - used - 1  # - 1: its newline
            if event["type"] == "result" and left > 0:
                try:
                    line = dumps(fit(event, left)) + "\n"
                except UsageError:
                    line = ""
            if not line or event["type"] != "result":
                if max_tokens <= STREAM_END:
                    raise UsageError(f"--max-tokens {max_tokens} is less than a stream "
                                     f"needs: raise it above {STREAM_END}")
                end = {"type": "truncated", "max_tokens": max_tokens, "tokens": used,
                       "nodes": nodes, "result": False,
                       "reason": "stopped at --max-tokens: raise it, or leave out "
                                 "--stream for an answer trimmed to it"}
                sys.stdout.write(dumps(end) + "\n")
                break
        found = found or (event["type"] == "node" and event["depth"] > 0)
        nodes += event["type"] == "node"
        used += cost(line)
        sys.stdout.write(line)
        sys.stdout.flush()  # each note as it is reached
    return EXIT_OK if found else EXIT_FINDINGS


def _draw(args: argparse.Namespace, answer: dict[str, Any]) -> None:
    """The answer as a Mermaid or DOT picture within `--max-tokens`: drawn from the answer
    trimmed as its JSON would be, with a comment saying what went."""
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.graphdraw import dot, mermaid
    from kbase_ci.query.payload import cut_note, fit_text

    draw, comment = (mermaid, "%% ") if args.format == "mermaid" else (dot, "// ")
    sys.stdout.write(fit_text(answer, draw, args.max_tokens,
                              lambda record: cut_note(record, comment)))


def explore_lines(answer: dict[str, Any]) -> list[str]:
    out = [f"{answer['note']}: {answer.get('notes', answer.get('found', 0) + 1)} notes "
           f"within {answer['depth']} hops" + (" (partial: " + answer["partial_reason"] + ")"
                                               if answer["partial"] else "")]
    out += [f"  cluster of {c['size']}, central {c['central']}: {', '.join(c['terms'])}"
            for c in answer["clusters"]]
    out.append("  hubs: " + ", ".join(f"{h['path']} ({h['degree']})" for h in answer["hubs"]))
    out.append("  read in this order: " + " -> ".join(answer["reading_path"]))
    return out


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
