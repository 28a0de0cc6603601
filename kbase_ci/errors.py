"""One error hierarchy, and the one place that maps errors to exit codes.

Exit codes: 0 clean/results, 1 findings/no results, 2 usage or config error,
3 internal error. The core raises these; only `cli` catches them.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class KbaseError(Exception):
    """Base for every error kbase reports on purpose."""

    exit_code = EXIT_INTERNAL


class UsageError(KbaseError):
    """Bad command line, unknown note, impossible request."""

    exit_code = EXIT_USAGE


class ConfigError(UsageError):
    """`.kbase.yml` is malformed; the message names file, line and key."""

    def __init__(self, message: str, path: str = ".kbase.yml", line: int = 1,
                 col: int = 1) -> None:
        super().__init__(f"{path}:{line}:{col}: KB900 {message}")
        self.path, self.line, self.col, self.detail = path, line, col, message


class GitError(UsageError):
    """A git command failed (not a repository, unknown revision, ...)."""


class IndexFormatError(UsageError):
    """An index artifact is missing, tampered with, or from another format version."""


class UnsafePathError(UsageError):
    """A write would leave the repository, enter `.git`, a submodule or kbase's own index
    folder, go through a symbolic link, or replace a folder kbase does not own."""


class ChangedError(UsageError):
    """A file changed between kbase reading it and replacing it (compare-and-swap)."""


def exit_code_for(exc: BaseException) -> int:
    if isinstance(exc, KbaseError):
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return 130
    return EXIT_INTERNAL
