"""The `kbase` command line: the commands and the order `kbase --help` lists them in,
the extra each needs, which command argv names (found without importing any command
module), the module that runs it, the argparse parser, and whether the JSON form was asked.

Each command lives in `kbase_ci.cli.commands.<name>` with `add_parser(subparsers)` and
`run(args) -> int`; the query commands are made from the query registry
(kbase_ci.query.tools) by `queryargs` (their parsers) and `queryrun` (running one).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

from kbase_ci import __version__
from kbase_ci.errors import EXIT_USAGE

_BEFORE = ("check", "index", "publish", "handover", "new", "fix", "mv", "ci")
_AFTER = ("scope", "mcp")
"""The commands of `commands/`, before and after the query commands in `kbase --help`."""

COMMAND_EXTRAS = {"index": "search", "publish": "search", "scope": "search", "ci": "ci",
                  "mcp": "mcp"}
"""The extra (kbase_ci.extras) each command of `commands/` needs beyond the core install;
the query commands need the registry's `EXTRA`. `check`, `fix`, `mv`, `new` and
`handover` are the core (the pre-commit hooks install nothing else)."""


def require_extra(word: str | None) -> None:
    """The missing-extra guard, before the command's code is imported (its `--help`
    works without the extra: the parsers import none of it)."""
    extra = COMMAND_EXTRAS.get(word or "")
    if extra is None and word is not None and word not in _BEFORE and word not in _AFTER:
        from kbase_ci.query.tools.registry import EXTRA as extra  # a query: loaded anyway
    if extra is not None:
        from kbase_ci.extras import require  # lazy: a hook run needs no extra

        require(extra, f"`kbase {word}`")


def _queries() -> tuple[str, ...]:
    # Lazy: a hook run names `check` and never needs the query registry.
    from kbase_ci.query.tools.registry import COMMANDS as queries

    return queries


def commands() -> list[str]:
    """Every command, in the order of `kbase --help`."""
    return [*_BEFORE, *_queries(), *_AFTER]


def __getattr__(name: str) -> Any:
    """`COMMANDS` (as `commands()`) and `_SHORT`, made when asked for (see `_queries`)."""
    if name == "COMMANDS":
        return commands()
    if name == "_SHORT":
        return {"check", "fix", *_queries()}
    raise AttributeError(name)


def command_module(name: str) -> ModuleType:
    if name not in _BEFORE and name not in _AFTER:
        return importlib.import_module("kbase_ci.cli.queryrun")
    return importlib.import_module(f"kbase_ci.cli.commands.{name.replace('-', '_')}cmd")


VALUE_OPTIONS = {"--root", "--config", "--color"}


def command_word(argv: Sequence[str]) -> str | None:
    """The subcommand named in argv, found without importing any command module."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in VALUE_OPTIONS:
            skip = True
        elif not arg.startswith("-"):
            return arg if arg in _BEFORE or arg in _AFTER or arg in _queries() else None
    return None


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, sized without `shutil` (which imports bz2 and lzma: ~2 ms
    of every run, as `add_argument` makes a formatter even when no help is printed)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:
            try:
                width = int(os.environ.get("COLUMNS", "")) or 0
            except ValueError:
                width = 0
            if width <= 0:
                try:
                    width = os.get_terminal_size(sys.__stdout__.fileno()).columns \
                        if sys.__stdout__ is not None else 80
                except (OSError, ValueError):
                    width = 80
            width -= 2
        super().__init__(prog, indent_increment, max_help_position, width)


class BadCommandLine(SystemExit):
    """argparse refused the command line (exit 2); `message` is what it said."""

    def __init__(self, message: str) -> None:
        super().__init__(EXIT_USAGE)
        self.message = message


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        # argparse's own output, word for word; the message is kept for the JSON form.
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise BadCommandLine(f"{self.prog}: {message}")


class _SubParser(_Parser):
    """A command's parser (and its subcommands'): an argument it does not know is its own
    error, with its own usage (argparse hands it up to `kbase`, whose usage lists the
    commands, not the options the user got wrong)."""

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or (with `only`) one that knows just that command, so a hook run
    imports one command module instead of all of them."""
    parser = _Parser(
        prog="kbase",
        description="Checks, committed indexes and agent queries for Markdown note vaults.",
    )
    parser.add_argument("--version", action="version", version=f"kbase {__version__}")
    parser.add_argument("--root", type=Path, default=None, metavar="DIR",
                        help="vault root (default: the git work tree around the current "
                             "directory, else the current directory)")
    parser.add_argument("--config", type=Path, default=None, metavar="FILE",
                        help="config file (default: ROOT/.kbase.yml)")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the output: auto (a terminal, unless NO_COLOR is set), "
                             "always, never (default: auto)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                parser_class=_SubParser)
    # With `only`, argv names that command: placeholders for the others would cost
    # one ArgumentParser each (~0.4 ms) on every hook run and never be used.
    for name in commands() if only is None else [only]:
        if name in _BEFORE or name in _AFTER:
            command_module(name).add_parser(sub)
        else:
            from kbase_ci.cli import queryargs  # not on a hook run

            # `kbase --help` shows the commands' help lines, none of their options.
            queryargs.add_command(sub, name, bare=only is None)
    return parser


# Commands that answer and exit (a hook run, a query): no cyclic collection while they
# run (`heap.collector_off`). Builds, publishing, CI runs and the MCP server keep it.
def answers_and_exits(word: str | None) -> bool:
    return word in ("check", "fix") or (
        word is not None and word not in _BEFORE and word not in _AFTER)


def json_asked(argv: Sequence[str]) -> bool:
    """Whether the command line asks for the JSON form (`--format json`): errors then go
    to stdout as JSON too (kbase_ci.cli.failure). Read from the words themselves, so it
    holds for a command line argparse refused; `--` ends the options."""
    for i, word in enumerate(argv):
        if word == "--":
            return False
        if word == "--format=json" or (word == "--format" and argv[i + 1:i + 2] == ["json"]):
            return True
    return False
