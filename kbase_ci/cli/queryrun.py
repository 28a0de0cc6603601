"""Running a query command: the call made from the parsed options (checked by its
declaration, kbase_ci.query.tools), the view opened from `--index`/`--scope`, and the
answer printed in `--format` within `--max-tokens`: JSON as kbase_ci.query.payload trims
it, text and pictures drawn from the answer trimmed the same way, `--stream` as JSON
lines."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.cli.common import open_vault
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK, UsageError
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.tools import registry
from kbase_ci.query.tools.spec import Nothing, Query, fields_of
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.payload import Marks
    from kbase_ci.query.view import QueryView
    from kbase_ci.vault.config import Config
    from kbase_ci.vault.notefiles import Vault

STREAM_END = 60
"""Tokens kept for the line that ends a stream cut by `--max-tokens`."""


class CliSession:
    """What a command's query runs on: the vault and index its options name (state: the
    view, opened once)."""

    model: Path | None = None  # `kbase search --model` is the search's own option

    def __init__(self, args: argparse.Namespace, query: Query[Any, Any]) -> None:
        self.args = args
        self.query = query
        self.form = str(args.format)
        self.max_tokens: int | None = None  # set by `run` once the budget is known
        self._view: QueryView | None = None
        self._vault: Vault | None = None

    def vault(self) -> Vault:
        """The vault the command's options name, opened once: the view's when one is
        open, else opened for this (with untracked notes: one just written, not yet
        added)."""
        if self._view is not None:
            return self._view.vault
        if self._vault is None:
            self._vault = open_vault(self.args, untracked=True)
        return self._vault

    def config(self) -> Config:
        """`.kbase.yml`'s settings, as read when the vault was opened: the view's when
        the query reads the index (its view is opened anyway), the vault's when one is
        open, else read for this (a query needing neither opens no vault for it)."""
        if self.query.source or self._view is not None:
            return self.view().vault.config
        if self._vault is not None:
            return self._vault.config
        # Lazy: `kbase --help` builds every command's parser; the library loads on use.
        from kbase_ci.git.repo import find_root
        from kbase_ci.vault.config import load_config

        root: Path | None = getattr(self.args, "root", None)
        return load_config(root if root is not None else find_root(),
                           getattr(self.args, "config", None))

    def view(self) -> QueryView:
        if self._view is None:
            self._view = open_view(self.args, stale_ok=self.query.stale_ok)
        return self._view

    def embedder(self, view: QueryView) -> tuple[Any, str | None]:
        return None, None  # looked for by the search itself, once


def open_view(args: argparse.Namespace, *, stale_ok: bool = False) -> QueryView:
    """The view a query answers from (`stale_ok`: a stale scope too, to report it)."""
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.trace import Trace
    from kbase_ci.query.view import QueryView
    from kbase_ci.scope.source import open_index_source

    trace = Trace("view")
    vault = open_vault(args, untracked=True)  # its `git status` refreshes git's stat data too
    if trace.on:  # counting the notes lists the work tree: an up-to-date index spares that
        trace("vault", root=vault.root, mode=vault.mode, notes=len(vault.notes))
    source = open_index_source(vault, args.index, getattr(args, "scope", None),
                               stale_ok=stale_ok)
    trace("index", origin=source.origin, location=source.location)
    if source.notice:
        from kbase_ci.report.escape import terminal_text  # lazy: see `_text`

        print(terminal_text(source.notice), file=sys.stderr)
    view = QueryView(vault, source)
    trace("freshness", stale=len(view.fresh.stale), overlaid=view.fresh.overlaid)
    return view


def run(args: argparse.Namespace) -> int:
    query = next(q for q in registry.declared(args.command) if q.name == args.query_tool)
    params = query.call({f.name: getattr(args, f.name) for f in fields_of(query.params)
                         if hasattr(args, f.name)})
    if query.check_form is not None:
        query.check_form(params, args.format)
    session = CliSession(args, query)
    if not query.budgeted:  # (a budgeted query's own parameter has its own default)
        args.max_tokens = session.max_tokens = _budget(args, query, session)
    if getattr(params, "stream", False) and query.events is not None:
        return _stream(query.events(session, params), args.max_tokens,
                       lambda answer: query.marks(params, answer))
    try:
        answer = query.run(session, params)
    except Nothing as exc:
        if args.format == "json":  # stdout answers in JSON whatever the exit code
            from kbase_ci.cli.failure import print_json_error  # lazy: only when nothing found

            print(f"kbase: {exc.message}", file=sys.stderr)
            print_json_error(exc.kind, EXIT_FINDINGS, exc.message, hint=exc.hint)
        else:  # the answer, in the text form: what was not found and what to try
            sys.stdout.write("".join(f"{line}\n" for line in
                                     _text(None, [f"{exc.message}: {exc.hint}"])))
        return EXIT_FINDINGS
    marks = query.marks(params, answer)
    if query.pictures and args.format in query.pictures:
        _draw(args, query, answer, marks)
    else:
        emit(args, query, answer, marks)
    return EXIT_OK if query.found(answer) else EXIT_FINDINGS


def _budget(args: argparse.Namespace, query: Query[Any, Any], session: CliSession
            ) -> int | None:
    """The tokens the answer may take: `--max-tokens` (0: no limit), else `.kbase.yml`'s
    `query.max_tokens` (default 8000, as MCP's tools), so no command floods an agent
    that did not ask for a budget, in any form."""
    from kbase_ci.query.payload import check_budget  # lazy: only a query prints one

    asked: int | None = args.max_tokens
    if asked is not None:
        return check_budget(asked)
    return check_budget(session.config().query.max_tokens)


def emit(args: argparse.Namespace, query: Query[Any, Any], answer: Record,
         marks: Marks) -> None:
    """Print the answer in `--format` (json or text) within `--max-tokens`: JSON as
    kbase_ci.query.payload trims it, text made from the answer trimmed the same way
    (unless the text form keeps to the budget itself, as `context`'s does)."""
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.payload import cut_note, fit_text, render

    max_tokens = args.max_tokens
    if args.format == "json":
        pretty = bool(args.pretty) or sys.stdout.isatty()
        sys.stdout.write(render(answer.to_json(), marks, max_tokens=max_tokens, pretty=pretty)
                         + "\n")
        return

    def drawn(a: Record) -> str:
        lines = query.text(a)
        if not lines:  # every answer prints something, an empty one too (exit 1)
            lines = [f"kbase {query.words}: nothing found"]
        return "".join(line + "\n" for line in _text(a, lines))

    if max_tokens is None or query.budgeted:
        sys.stdout.write(drawn(answer))
        return
    sys.stdout.write(fit_text(answer.to_json(),
                              lambda j: drawn(type(answer).from_json(j, **answer._hidden())),
                              max_tokens, cut_note, marks))


def _text(answer: Record | None, lines: list[str]) -> list[str]:
    # Lazy: the escaping's Unicode classes (~4 ms to import) are for text on a terminal;
    # a JSON answer is escaped by `json.dumps`.
    from kbase_ci.report.escape import terminal_text

    # note text: no escape sequence reaches the terminal
    out = [terminal_text(line, lines=True) for line in lines]
    info = getattr(answer, "index", None)
    if not isinstance(info, IndexInfo):
        return out
    if info.stale_count:
        out.append(f"(index from {str(info.source_commit)[:10]}; "
                   f"{info.stale_count} note(s) changed since, overlaid)")
    if info.scope is not None and info.scope.stale:
        out.append(f"(stale: {terminal_text(str(info.scope.reason))})")
    return out


def _draw(args: argparse.Namespace, query: Query[Any, Any], answer: Record,
          marks: Marks) -> None:
    """The answer as a picture within `--max-tokens`: drawn from the answer trimmed as
    its JSON would be, with a comment saying what went."""
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.payload import cut_note, fit_text

    assert query.draw is not None and query.pictures is not None
    draw, form = query.draw, args.format
    comment = query.pictures[form]
    sys.stdout.write(fit_text(answer.to_json(),
                              lambda j: draw(type(answer).from_json(j, **answer._hidden()), form),
                              args.max_tokens, lambda record: cut_note(record, comment),
                              marks))


def _stream(events: Iterator[tuple[str, Record]], max_tokens: int | None,
            marks: Callable[[Record], Marks]) -> int:
    """JSON lines, each item as it is reached (the first: where the walk starts), then
    the result; with `--max-tokens`, the walk stops at the first line that would not fit
    (the result trimmed to what is left, when that is enough) and a last `{"type":
    "truncated", ...}` line says so."""
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.payload import check_budget, cost, dumps, fit

    max_tokens = check_budget(max_tokens)
    found, used, nodes = False, 0, 0
    for kind, record in events:
        event = {"type": kind, **record.to_json()}
        line = dumps(event) + "\n"
        if max_tokens is not None and used + cost(line) > max_tokens - STREAM_END:
            left = max_tokens - STREAM_END - used - 1  # - 1: its newline
            if kind == "result" and left > 0:
                try:
                    line = dumps(fit(event, left, marks(record))) + "\n"
                except UsageError:
                    line = ""
            if not line or kind != "result":
                if max_tokens <= STREAM_END:
                    raise UsageError(f"--max-tokens {max_tokens} is less than a stream "
                                     f"needs: raise it above {STREAM_END}")
                end = {"type": "truncated", "max_tokens": max_tokens, "tokens": used,
                       "nodes": nodes, "result": False,
                       "reason": "stopped at --max-tokens: raise it, or leave out "
                                 "--stream for an answer trimmed to it"}
                sys.stdout.write(dumps(end) + "\n")
                break
        found = found or (kind == "node" and nodes > 0)  # past where the walk starts
        nodes += kind == "node"
        used += cost(line)
        sys.stdout.write(line)
        sys.stdout.flush()  # each note as it is reached
    return EXIT_OK if found else EXIT_FINDINGS
