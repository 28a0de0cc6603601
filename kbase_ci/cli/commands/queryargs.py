"""What the query commands share: `--index`, `--format`, opening the overlaid view, and
printing an answer (JSON, or a short text form)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.git.indexbranch import BRANCH
from kbase_ci.report.escape import terminal_text

if TYPE_CHECKING:
    from kbase_ci.query.view import QueryView


def add_source(p: argparse.ArgumentParser) -> None:
    """`--index` and `--scope`: which index a query (or the MCP server) answers from."""
    p.add_argument("--index", type=Path, default=None, metavar="DIR",
                   help=f"index folder (default: .kbase/, else the {BRANCH} branch, "
                        f"else a remote's {BRANCH} branch)")
    p.add_argument("--scope", default=None, metavar="NAME",
                   help="answer from the scoped index NAME only (`kbase scope build NAME`)")
    add_offline(p)


def add_offline(p: argparse.ArgumentParser) -> None:
    p.add_argument("--offline", action="store_true",
                   help="never use the network: no index branch fetch, no model download "
                        "(the same as KBASE_OFFLINE=1)")


def add_common(p: argparse.ArgumentParser, formats: tuple[str, ...] = ("json", "text"),
               max_tokens: int | None = None) -> None:
    add_source(p)
    p.add_argument("--format", choices=formats, default="json",
                   help="output format (default: %(default)s)")
    p.add_argument("--max-tokens", type=int, default=max_tokens, metavar="N",
                   help="the answer printed (JSON, text or picture) stays within N tokens: "
                        "lists are cut from their least relevant end and `truncated` (a "
                        "last line in text) says what went" +
                        (" (default: %(default)s)" if max_tokens else " (default: no limit)"))
    p.add_argument("--pretty", action="store_true",
                   help="indented JSON (the default on a terminal; compact otherwise)")


def add_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="stop after this many seconds and answer with what was found so "
                        "far, marked `partial: true` with the reason")


def open_view(args: argparse.Namespace) -> QueryView:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.cli.common import open_vault
    from kbase_ci.query.trace import Trace
    from kbase_ci.query.view import QueryView
    from kbase_ci.scope.source import open_index_source

    trace = Trace("view")
    vault = open_vault(args, untracked=True)  # its `git status` refreshes git's stat data too
    trace("vault", root=vault.root, mode=vault.mode, notes=len(vault.notes))
    scope = getattr(args, "scope", None)
    # `status` reports a stale scope; every other query refuses it (exit 2).
    source = open_index_source(vault, args.index, scope, stale_ok=args.command == "status")
    trace("index", origin=source.origin, location=source.location)
    if source.notice:
        print(terminal_text(source.notice), file=sys.stderr)
    view = QueryView(vault, source)
    trace("freshness", stale=len(view.fresh.stale), overlaid=view.fresh.overlaid)
    return view


TextForm = Callable[[dict[str, Any]], list[str]]
"""An answer's text form, made from the answer (so it can be made again from the answer
trimmed to `--max-tokens`)."""


def emit(args: argparse.Namespace, answer: dict[str, Any], text_lines: TextForm, *,
         budgeted: bool = False) -> None:
    """Print the answer in `--format` (json or text) within `--max-tokens`: JSON as
    kbase_ci.query.payload trims it, text made from the answer trimmed the same way
    (`budgeted`: the text form already keeps to the budget, as `context`'s does)."""
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.payload import cut_note, fit_text, render

    max_tokens = getattr(args, "max_tokens", None)
    if args.format == "json":
        pretty = bool(getattr(args, "pretty", False)) or sys.stdout.isatty()
        sys.stdout.write(render(answer, max_tokens=max_tokens, pretty=pretty) + "\n")
        return

    def draw(ans: dict[str, Any]) -> str:
        return "".join(line + "\n" for line in _text(ans, text_lines(ans)))

    sys.stdout.write(draw(answer) if budgeted else
                     fit_text(answer, draw, max_tokens, cut_note))


def _text(answer: dict[str, Any], text_lines: list[str]) -> list[str]:
    info = answer.get("index", {})
    # note text: no escape sequence reaches the terminal
    out = [terminal_text(line, lines=True) for line in text_lines]
    if info.get("stale_count"):
        out.append(f"(index from {str(info.get('source_commit'))[:10]}; "
                   f"{info['stale_count']} note(s) changed since, overlaid)")
    scope = info.get("scope") or {}
    if scope.get("stale"):
        out.append(f"(stale: {terminal_text(str(scope.get('reason')))})")
    return out
