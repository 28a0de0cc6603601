"""`kbase` command line: running a command, and the one place errors become exit codes.

The command line itself (the commands, which one argv names, the argparse parser) is
`commandline`; commands call the library and format its records, nothing more.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kbase_ci.cli.commandline import (
    VALUE_OPTIONS,
    BadCommandLine,
    answers_and_exits,
    build_parser,
    command_module,
    command_word,
    json_asked,
    require_extra,
)
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


def _tolerant_streams() -> None:
    """git names a non-UTF-8 file with surrogate escapes; a strict UTF-8 stdout (most
    desktop locales) would crash on printing it, so print `\\udcff` instead."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    word = command_word(args_list)
    if not answers_and_exits(word):
        return _main(args_list, word)
    if word not in ("check", "fix"):  # a query: one BLAS thread, said before numpy loads
        from kbase_ci.state.threads import one_blas_thread_from_start  # not on a hook run

        one_blas_thread_from_start()
    ahead = word == "check" and "--staged" in args_list and not \
        VALUE_OPTIONS.intersection(args_list)
    if ahead:  # a hook run: git works on the other core while the check code imports
        from kbase_ci.git import diff  # lazy: only a hook run starts git ahead

        diff.prefetch_hook_git(Path.cwd().resolve())
    try:
        # `argv` None: the process's own command line, whose end is the process's.
        with collector_off(last=argv is None):
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


def _say_unopened(show: bool = True) -> None:
    """Once per run: the caches and memos a read-only or full git dir made the run go
    without (kbase_ci.state.database). The answers are right; only speed is lost.
    `show=False` forgets an earlier in-process run's (tests call `main` many times)."""
    if "kbase_ci.state.database" not in sys.modules:  # no database was asked for
        return
    from kbase_ci.state.database import take_unopened  # loaded already (checked above)

    missed = take_unopened()
    if not show or not missed:
        return
    from kbase_ci.report.escape import terminal_text  # lazy: only a run that has to say it

    for folder, why in sorted(missed.items()):
        print(terminal_text(f"kbase: note: caches are not kept in {folder} ({why}); the "
                            "answers are the same, each run does its work again"),
              file=sys.stderr)



def _json_error(kind: str, code: int, message: str, exc: BaseException | None = None) -> None:
    from kbase_ci.cli.failure import print_json_error  # lazy: only a failing run

    print_json_error(kind, code, message, exc)


def _run(args_list: list[str], word: str | None) -> int:
    _tolerant_streams()
    _say_unopened(show=False)
    parser = build_parser(word)
    as_json = json_asked(args_list)
    try:
        args = parser.parse_args(args_list)
    except BadCommandLine as exc:
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
        require_extra(word)
        if word not in ("check", "fix"):  # a hook run never downloads a model
            _show_downloads(args.color)
        try:
            code = int(command_module(args.command).run(args))
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
