"""`kbase` command line: argparse, dispatch, and the one place errors become exit codes.

Each command lives in `kbase_ci.cli.commands.<name>` with `add_parser(subparsers)` and
`run(args) -> int`; commands call the library and format its records, nothing more. The
query commands are made from the query registry (kbase_ci.query.tools) by
`queryargs` (their parsers) and `queryrun` (running one).
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
from kbase_ci.collector import collector_off
from kbase_ci.errors import (
    EXIT_FINDINGS,
    EXIT_INTERNAL,
    EXIT_USAGE,
    GitError,
    GitHubError,
    IndexFormatError,
    KbaseError,
    PublishGaveUp,
    StorageError,
    UsageError,
)

EXIT_CODES: tuple[tuple[type[BaseException], int], ...] = (
    (UsageError, EXIT_USAGE),  # and ConfigError, UnsafePathError, ChangedError
    (IndexFormatError, EXIT_USAGE),  # a bad, forged or other-version index: fix the input
    (GitError, EXIT_USAGE),  # not a repository, unknown revision, refused push
    (PublishGaveUp, EXIT_FINDINGS),  # as `kbase publish` giving up: retry later
    (GitHubError, EXIT_INTERNAL),  # the API still failing after its retry (docs/action.md)
    (KeyboardInterrupt, 130),
)
"""The one place an error becomes an exit code (README "Exit codes"): the first class
the error is an instance of. Anything else, a KbaseError of no class here included, is
an internal error (3)."""


def exit_code_for(exc: BaseException) -> int:
    return next((code for kind, code in EXIT_CODES if isinstance(exc, kind)), EXIT_INTERNAL)

OFFLINE_ENV = "KBASE_OFFLINE"
"""`--offline` sets it for the command (kbase_ci.state.hubcache.offline reads it)."""

_BEFORE = ("check", "index", "publish", "handover", "new", "fix", "mv", "ci")
_AFTER = ("scope", "mcp")
"""The commands of `commands/`, before and after the query commands in `kbase --help`."""

COMMAND_EXTRAS = {"index": "search", "publish": "search", "scope": "search", "ci": "ci",
                  "mcp": "mcp"}
"""The extra (kbase_ci.extras) each command of `commands/` needs beyond the core install;
the query commands need the registry's `EXTRA`. `check`, `fix`, `mv`, `new` and
`handover` are the core (the pre-commit hooks install nothing else)."""


def _require_extra(word: str | None) -> None:
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


def _command(name: str) -> ModuleType:
    if name not in _BEFORE and name not in _AFTER:
        return importlib.import_module("kbase_ci.cli.queryrun")
    return importlib.import_module(f"kbase_ci.cli.commands.{name.replace('-', '_')}")


_VALUE_OPTIONS = {"--root", "--config", "--color"}


def _command_word(argv: Sequence[str]) -> str | None:
    """The subcommand named in argv, found without importing any command module."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _VALUE_OPTIONS:
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


class _BadCommandLine(SystemExit):
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
        raise _BadCommandLine(f"{self.prog}: {message}")


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
                                parser_class=_Parser)
    # With `only`, argv names that command: placeholders for the others would cost
    # one ArgumentParser each (~0.4 ms) on every hook run and never be used.
    for name in commands() if only is None else [only]:
        if name in _BEFORE or name in _AFTER:
            _command(name).add_parser(sub)
        else:
            from kbase_ci.cli import queryargs  # not on a hook run

            # `kbase --help` shows the commands' help lines, none of their options.
            queryargs.add_command(sub, name, bare=only is None)
    return parser


def _tolerant_streams() -> None:
    """git names a non-UTF-8 file with surrogate escapes; a strict UTF-8 stdout (most
    desktop locales) would crash on printing it, so print `\\udcff` instead."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


# Commands that answer and exit (a hook run, a query): no cyclic collection while they
# run (`heap.collector_off`). Builds, publishing, CI runs and the MCP server keep it.
def _short(word: str | None) -> bool:
    return word in ("check", "fix") or (
        word is not None and word not in _BEFORE and word not in _AFTER)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    word = _command_word(args_list)
    if not _short(word):
        return _main(args_list, word)
    ahead = word == "check" and "--staged" in args_list and not \
        _VALUE_OPTIONS.intersection(args_list)
    if ahead:  # a hook run: git works on the other core while the check code imports
        from kbase_ci.git import diff  # lazy: only a hook run starts git ahead

        diff.prefetch_hook_git(Path.cwd().resolve())
    try:
        with collector_off():
            return _main(args_list, word)
    finally:
        if ahead:
            diff.drop_hook_git()


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM (a CI job cancelled, a killed hook): unwind like an interrupt, so temp
    folders and half-built indexes are removed on the way out."""
    raise SystemExit(128 + signum)


def _main(args_list: list[str], word: str | None) -> int:
    import signal

    try:
        previous = signal.signal(signal.SIGTERM, _terminated)
    except ValueError:  # not the main thread (an embedding caller): leave signals be
        return _run(args_list, word)
    try:
        return _run(args_list, word)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _show_downloads(color: str) -> None:
    """Model downloads not shown by a command's own progress (a query's) get the same
    display as an index build's stages: a bar on a terminal, timed lines in a log."""
    # Lazy: the download code loads only for commands that may download.
    from kbase_ci.state.downloads import report_downloads

    def display() -> Any:
        from kbase_ci.report.terminal import StageProgress, color_wanted  # at a download

        return StageProgress(sys.stderr, tty=sys.stderr.isatty(),
                             color=color_wanted(sys.stderr, color))

    report_downloads(display)


def _say_unopened() -> None:
    """Once per run: the caches and memos a read-only or full git dir made the run go
    without (kbase_ci.state.database). The answers are right; only speed is lost."""
    if "kbase_ci.state.database" not in sys.modules:  # no database was asked for
        return
    from kbase_ci.report.escape import terminal_text
    from kbase_ci.state.database import unopened

    for folder, why in sorted(unopened().items()):
        print(terminal_text(f"kbase: note: caches are not kept in {folder} ({why}); the "
                            "answers are the same, each run does its work again"),
              file=sys.stderr)


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


def _json_error(kind: str, code: int, message: str, exc: BaseException | None = None) -> None:
    from kbase_ci.cli.failure import print_json_error  # lazy: only a failing run

    print_json_error(kind, code, message, exc)


def _run(args_list: list[str], word: str | None) -> int:
    _tolerant_streams()
    parser = build_parser(word)
    as_json = json_asked(args_list)
    try:
        args = parser.parse_args(args_list)
    except _BadCommandLine as exc:
        if as_json:
            _json_error(UsageError.kind, EXIT_USAGE, exc.message)
        return EXIT_USAGE
    except SystemExit as exc:  # argparse exits 0 for --help and --version
        return int(exc.code or 0)
    saved = os.environ.get(OFFLINE_ENV)
    if getattr(args, "offline", False):  # read by the index fetch and model downloads
        os.environ[OFFLINE_ENV] = "1"
    if os.environ.get("KBASE_LOG"):
        from kbase_ci.query.trace import enable_from_env  # only when tracing is asked for

        enable_from_env()
    try:
        _require_extra(word)
        if word not in ("check", "fix"):  # a hook run never downloads a model
            _show_downloads(args.color)
        try:
            code = int(_command(args.command).run(args))
            _say_unopened()
            return code
        except OSError as exc:
            storage = StorageError.of(exc)
            if storage is None:
                raise
            raise storage from exc
    except KbaseError as exc:
        # Lazy: only a failing run loads the escaping and colours. A message may quote a
        # `.kbase.yml` key or a note name: on one line, it can never become a workflow
        # command.
        from kbase_ci.report.escape import terminal_text
        from kbase_ci.report.terminal import color_wanted, paint

        red = color_wanted(sys.stderr, args.color)
        print(f"{paint('kbase: error:', 'error', red)} {terminal_text(str(exc))}",
              file=sys.stderr)
        if as_json:
            _json_error(exc.kind, exit_code_for(exc), str(exc), exc)
        return exit_code_for(exc)
    except KeyboardInterrupt as exc:
        print("kbase: interrupted", file=sys.stderr)
        if as_json:
            _json_error("interrupted", exit_code_for(exc), "interrupted")
        return exit_code_for(exc)
    except BrokenPipeError:  # `kbase ... | head` closed the pipe: not an error
        return 0
    except BaseException as exc:  # pyo3's PanicException is one
        if isinstance(exc, (SystemExit, GeneratorExit)):  # SIGTERM's exit 143, say
            raise
        import traceback  # with tokenize, linecache and textwrap: only when it crashes

        print("kbase: internal error (please report this with the traceback below)",
              file=sys.stderr)
        traceback.print_exc()
        if as_json:
            _json_error("internal", EXIT_INTERNAL, "internal error: the traceback is on stderr")
        return EXIT_INTERNAL
    finally:
        if saved is None:
            os.environ.pop(OFFLINE_ENV, None)
        else:
            os.environ[OFFLINE_ENV] = saved


if __name__ == "__main__":
    sys.exit(main())
