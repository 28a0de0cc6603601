"""What the query commands share: `--index`, `--format`, opening the overlaid view, and
printing an answer (JSON, or a short text form)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..query.view import QueryView


def add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index", type=Path, default=None, metavar="DIR",
                   help="index folder (default: .kbase/, else the kbase-index branch, "
                        "else a remote's kbase-index branch)")
    p.add_argument("--format", choices=("json", "text"), default="json",
                   help="output format (default: %(default)s)")
    p.add_argument("--scope", default=None, metavar="NAME",
                   help="answer from the scoped index NAME only (`kbase scope build NAME`)")


def open_view(args: argparse.Namespace) -> QueryView:
    from ..query.source import open_source
    from ..query.view import QueryView
    from . import open_vault

    vault = open_vault(args)  # its `git status` refreshes git's stat data too
    scope = getattr(args, "scope", None)
    # `status` reports a stale scope; every other query refuses it (exit 2).
    source = open_source(vault, args.index, scope, stale_ok=args.command == "status") \
        if scope is not None else open_source(vault, args.index)
    if source.notice:
        print(source.notice, file=sys.stderr)
    return QueryView(vault, source)


def emit(args: argparse.Namespace, answer: dict[str, Any], text_lines: list[str]) -> None:
    if args.format == "json":
        sys.stdout.write(json.dumps(answer, ensure_ascii=False, indent=2) + "\n")
        return
    info = answer.get("index", {})
    for line in text_lines:
        print(line)
    if info.get("stale_notes"):
        print(f"(index from {str(info.get('source_commit'))[:10]}; "
              f"{len(info['stale_notes'])} note(s) changed since, overlaid)")
    scope = info.get("scope") or {}
    if scope.get("stale"):
        print(f"(stale: {scope.get('reason')})")
