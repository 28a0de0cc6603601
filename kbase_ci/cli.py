"""`kbase` command line: argparse, dispatch, and the one place errors become exit codes.

Each command lives in `kbase_ci.commands.<name>` with `add_parser(subparsers)` and
`run(args) -> int`; commands call the library and format its records, nothing more.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from . import __version__
from .errors import EXIT_INTERNAL, EXIT_USAGE, KbaseError, exit_code_for

# Order = order in `kbase --help`.
COMMANDS = ["check"]


def _command(name: str) -> ModuleType:
    return importlib.import_module(f"kbase_ci.commands.{name}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kbase",
        description="Checks, committed indexes and agent queries for Markdown note vaults.",
    )
    parser.add_argument("--version", action="version", version=f"kbase {__version__}")
    parser.add_argument("--root", type=Path, default=None, metavar="DIR",
                        help="vault root (default: the git work tree around the current "
                             "directory, else the current directory)")
    parser.add_argument("--config", type=Path, default=None, metavar="FILE",
                        help="config file (default: ROOT/.kbase.yml)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        _command(name).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 for --help
        return int(exc.code or 0)
    try:
        return int(_command(args.command.replace("-", "_")).run(args))
    except KbaseError as exc:
        print(f"kbase: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("kbase: interrupted", file=sys.stderr)
        return exit_code_for(KeyboardInterrupt())
    except BrokenPipeError:  # `kbase ... | head` closed the pipe: not an error
        return 0
    except Exception:
        print("kbase: internal error (please report this with the traceback below)",
              file=sys.stderr)
        traceback.print_exc()
        return EXIT_INTERNAL


def usage_error(message: str) -> int:
    print(f"kbase: error: {message}", file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
