"""One error hierarchy: the core raises these, only `cli` catches them.

`kbase_ci.cli.main.EXIT_CODES` is the one place that turns each class into an exit code:
0 clean/results, 1 findings/no results, 2 usage or config error, 3 internal error.
"""

from __future__ import annotations

from typing import Any

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


def error_json(kind: str, message: str, *, exit_code: int | None = None,
               exc: BaseException | None = None, hint: str | None = None) -> dict[str, Any]:
    """An error as kbase prints it for an agent (`--format json`, an MCP tool's error):
    `{"error": {kind, exit_code, message}}` (`exit_code` only from a command), with
    `hint` (what to try) when there is one, and the fields of `exc` that say where:
    `path`, `line` and `col` (a `.kbase.yml` key), `parameter` (the argument at fault)."""
    body: dict[str, Any] = {"kind": kind}
    if exit_code is not None:
        body["exit_code"] = exit_code
    body["message"] = message
    if hint is not None:
        body["hint"] = hint
    for key in ("path", "line", "col", "parameter"):
        value = getattr(exc, key, None)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            body[key] = value
    return {"error": body}


class KbaseError(Exception):
    """Base for every error kbase reports on purpose. `kind` names the class in the JSON
    error a command prints when its JSON form was asked (docs/json-schema.md, "Errors")."""

    kind = "error"


class UsageError(KbaseError):
    """Bad command line, unknown note, impossible request; `parameter`: the argument at
    fault, when one is (an MCP tool's error names it)."""

    kind = "usage"

    def __init__(self, message: str, *, parameter: str | None = None) -> None:
        super().__init__(message)
        self.parameter = parameter


class ConfigError(UsageError):
    """`.kbase.yml` is malformed; the message names file, line and key."""

    kind = "config"

    def __init__(self, message: str, path: str = ".kbase.yml", line: int = 1,
                 col: int = 1) -> None:
        super().__init__(f"{path}:{line}:{col}: KB900 {message}")
        self.path, self.line, self.col, self.detail = path, line, col, message


class UnsafePathError(UsageError):
    """A write would leave the repository, enter `.git`, a submodule or kbase's own index
    folder, go through a symbolic link, or replace a folder kbase does not own."""

    kind = "unsafe-path"


class ChangedError(UsageError):
    """A file changed between kbase reading it and replacing it (compare-and-swap)."""

    kind = "changed"


class StorageError(UsageError):
    """A file kbase must write cannot be written: the disk is full, or the file system is
    read-only (issue 28: a full disk ended in an OSError traceback, exit 3)."""

    kind = "storage"

    @classmethod
    def of(cls, exc: OSError) -> StorageError | None:
        """The error for `exc` when it says there is no room or no write access."""
        import errno

        if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
            return None
        where = f"{exc.filename}: " if exc.filename else ""
        return cls(f"{where}{exc.strerror or exc}: free some space, or work in a writable "
                   "clone (queries and checks need no writes; `kbase index` does)")


class InputRefused(UsageError, OSError):
    """A file kbase did not write that it will not read or decode (kbase_ci.state.bounded):
    not a regular file (a FIFO, socket or device), a symbolic link out of its tree, larger
    than its cap, or over its decoding budget (too many values, nested too deeply, out of
    memory); the message names the file. Also an OSError: a caller that treats an
    unreadable file as absent treats a refused one the same way."""

    kind = "refused-input"

    def __init__(self, where: str, detail: str, line: int | None = None,
                 col: int | None = None) -> None:
        at = where if line is None else f"{where}:{line}:{col or 1}"
        super().__init__(f"{at}: {detail}")
        # `at`: the file, with the line and column when known (`path:line:col`).
        self.at, self.where, self.detail, self.line, self.col = at, where, detail, line, col

    def __reduce__(self) -> tuple[type[InputRefused], tuple[str, str, int | None, int | None]]:
        # Raised in a build's worker process, it crosses to the parent pickled.
        return type(self), (self.where, self.detail, self.line, self.col)


class GitError(KbaseError):
    """A git command failed (not a repository, unknown revision, a refused push, ...)."""

    kind = "git"


class IndexFormatError(KbaseError):
    """An index artifact is missing, tampered with, forged, or from another format
    version; the message names the file (and, for the manifest, the key)."""

    kind = "index"


class ModelRefused(UsageError):
    """An embedding model's files made the library that runs them fail (a tokenizer
    regex that panics, an ONNX graph with a scalar output, weights of the wrong shape):
    a query ranks by BM25 and says so in a notice, a build stops with exit 2
    (kbase_ci.index.fence)."""


class GitHubError(KbaseError):
    """A GitHub API call failed after its retry (kbase_ci.ci.github); `status` is the
    HTTP status (0: no response)."""

    kind = "github"

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(f"GitHub API: {message}")
        self.status = status


class PublishGaveUp(KbaseError):
    """Publishing the index lost every push race (`kbase ci` in index mode; `kbase
    publish` returns its `gave-up` result instead)."""

    kind = "publish-gave-up"
