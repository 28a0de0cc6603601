"""`kbase search`: find notes by meaning and words (hybrid BM25 + vectors)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "search", help="search notes (hybrid BM25 + vectors) from the committed index",
        description="Search the vault's index. Exit 0 results, 1 no results, 2 error.")
    p.add_argument("query", help="what to look for")
    p.add_argument("--mode", choices=("hybrid", "bm25", "semantic"), default="hybrid")
    p.add_argument("--domain", default=None, help="only notes of this domain")
    p.add_argument("--tag", action="append", default=[], metavar="T",
                   help="only notes with tag T or a tag under it (T/...); repeatable")
    p.add_argument("--limit", type=int, default=5)
    p.add_argument("--snippets", action="store_true", help="a snippet around the match")
    p.add_argument("--concise", action="store_true", help="paths, titles and scores only")
    p.add_argument("--explain", action="store_true", help="each ranker's rank and score")
    p.add_argument("--model", type=Path, default=None, metavar="PATH",
                   help="embedding model folder (default: as the index was built)")
    add_common(p)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.search import search_answer

    view = open_view(args)
    answer = search_answer(view, args.query, mode=args.mode, limit=args.limit, tags=args.tag,
                           domain=args.domain, snippets=args.snippets, concise=args.concise,
                           explain=args.explain, model=args.model)
    emit(args, answer, _lines)
    return EXIT_OK if answer["results"] else EXIT_FINDINGS


def _lines(answer: dict[str, Any]) -> list[str]:
    lines = []
    for r in answer["results"]:
        where = f"  [{r['section']}]" if r.get("section") else ""
        lines.append(f"{r['path']}{where}")
        if "snippet" in r:
            lines.append(f"    {r['snippet']}")
    return lines
