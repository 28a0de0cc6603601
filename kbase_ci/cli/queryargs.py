"""The query commands' parsers, made from the query registry (kbase_ci.query.registry): a
tool's parameters as arguments and options (subcommands for its actions: `kbase graph
path`), then what every query takes: `--index`, `--scope` and `--offline` (where it
answers from), `--format`, `--max-tokens` and `--pretty` (how it prints)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kbase_ci.extras import deferred
from kbase_ci.git.indexbranch import BRANCH
from kbase_ci.query import registry
from kbase_ci.query.spec import BUDGET_ARG, Arg, Query, fields_of

_TYPES: dict[Any, type] = {int: int, float: float, Path: Path}


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


def add_command(sub: Any, word: str, *, bare: bool = False) -> None:
    """The parser of `kbase WORD`, a query command (`bare`: its help line only, for
    `kbase --help`, which shows no command's options)."""
    if bare:  # from the registry's table: no query is imported
        sub.add_parser(word, help=registry.HELPS[word])
        return
    # A query's declaration sits with its answer code, which needs the search extra:
    # checked after parsing (`commandline.require_extra`), so `--help` works without it.
    with deferred(f"`kbase {word}`"):
        queries = registry.declared(word)
    main = next(q for q in queries if q.command == (word,))
    p: argparse.ArgumentParser = sub.add_parser(word, help=main.help,
                                                description=main.description)
    p.set_defaults(query_tool=main.name)
    if main.actions is not None:
        _actions(p, main)
    else:
        _arguments(p, main)
    more = [q for q in queries if q is not main]
    if more:
        acts = p.add_subparsers(dest="action", metavar="ACTION")
        for q in more:
            add_subcommand(acts, q)


def add_subcommand(sub: Any, query: Query[Any, Any]) -> None:
    """`kbase tags suggest`, `kbase handover latest`: a query under another command."""
    p: argparse.ArgumentParser = sub.add_parser(query.command[-1], help=query.help,
                                                description=query.description)
    p.set_defaults(query_tool=query.name)
    _arguments(p, query)


def _actions(p: argparse.ArgumentParser, query: Query[Any, Any]) -> None:
    """A subcommand per action, each with the options that action takes."""
    dest = query.actions
    assert dest is not None
    field = next(f for f in fields_of(query.params) if f.name == dest)
    acts = p.add_subparsers(dest=dest, metavar="ACTION", required=True)
    for action in field.param.choices:
        a: argparse.ArgumentParser = acts.add_parser(
            action, aliases=list((query.aliases or {}).get(action, ())),
            help=(field.param.helps or {}).get(action))
        a.set_defaults(**{dest: action})  # an alias names the action too
        _arguments(a, query, action)


def _arguments(p: argparse.ArgumentParser, query: Query[Any, Any],
               action: str | None = None) -> None:
    for f in fields_of(query.params):
        if f.name != BUDGET_ARG.name and f.param.cli and f.name != query.actions and (
                action is None or not f.param.actions or action in f.param.actions):
            _add(p, f, action)
    _common(p, query)


def _add(p: argparse.ArgumentParser, f: Arg, action: str | None) -> None:
    meta = f.param
    helps = meta.helps or {}
    kwargs: dict[str, Any] = {"help": helps.get(action or "", meta.help)}
    if meta.metavar:
        kwargs["metavar"] = meta.metavar
    if meta.choices:
        kwargs["choices"] = meta.choices
    default = f.default
    if meta.by_action and action is not None and action in meta.by_action:
        default = meta.by_action[action]
    if f.type in _TYPES:
        kwargs["type"] = _TYPES[f.type]
    if meta.positional:
        if not f.required and not meta.actions:
            kwargs["nargs"] = "?"
            kwargs["default"] = default
        p.add_argument(f.name, **kwargs)
        return
    if f.type is bool:
        kwargs.pop("metavar", None)
        p.add_argument(f.flag, dest=f.name, action="store_true", **kwargs)
    elif f.many:
        p.add_argument(f.flag, dest=f.name, action="append", default=None, **kwargs)
    else:
        p.add_argument(f.flag, dest=f.name, default=default, **kwargs)


def _common(p: argparse.ArgumentParser, query: Query[Any, Any]) -> None:
    if query.source:
        add_source(p)
    p.add_argument("--format", choices=query.formats, default=query.default_format,
                   help="output format (default: %(default)s)")
    _add(p, query.budget, None)
    p.add_argument("--pretty", action="store_true",
                   help="indented JSON (the default on a terminal; compact otherwise)")
