"""kbase-ci's extras (pyproject.toml) and the one guard that turns a missing one into exit 2
with its `pip install` line.

A missing extra is a usage error naming the exact `pip install 'kbase-ci[...]'` line,
instead of a `ModuleNotFoundError` deep inside a command.

The core install (`pip install kbase-ci`, what the pre-commit hooks install) runs
`check`, `fix`, `mv`, `new` and `handover`. The guard runs where a command is dispatched
(kbase_ci.cli.commandline: the query commands need `registry.EXTRA`, the others
`COMMAND_EXTRAS`) and at the top of each extra's entry module, for code that
imports kbase as a library: `kbase_ci.index` (search), `kbase_ci.mcp` (mcp), `kbase_ci.ci`
(ci), and where an ONNX model is loaded (transformer, kbase_ci.index.transformer).
A test (tests/unit/test_extras.py) keeps `EXTRAS` and pyproject.toml in step.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib.util import find_spec

from kbase_ci.errors import UsageError

EXTRAS: dict[str, tuple[str, ...]] = {
    # Index builds and every query: BM25 (bm25s, PyStemmer), vectors (numpy, usearch),
    # the static embedding model's tokenizer (tokenizers), model downloads
    # (huggingface_hub), index locks (filelock), BLAS threads (threadpoolctl), progress
    # bars (rich).
    "search": ("numpy", "bm25s", "Stemmer", "usearch", "tokenizers", "huggingface_hub",
               "filelock", "threadpoolctl", "rich"),
    # ONNX sentence-embedding models (the transformer tier).
    "transformer": ("onnxruntime",),
    "mcp": ("mcp",),
    # `kbase ci` (what action.yml installs): it rebuilds and publishes the index.
    "ci": (),
}
"""Each extra's import names, besides those of the extras it includes (`INCLUDES`)."""

INCLUDES: dict[str, tuple[str, ...]] = {
    "transformer": ("search",),
    "mcp": ("search",),
    "ci": ("search",),
}
"""An extra that installs others (`kbase mcp` serves the queries: `[mcp]` pulls `[search]`)."""


def modules(extra: str) -> tuple[str, ...]:
    """Every import name `extra` provides, its included extras' first."""
    names = [n for part in INCLUDES.get(extra, ()) for n in modules(part)]
    return tuple(dict.fromkeys([*names, *EXTRAS[extra]]))


def pip_line(extra: str) -> str:
    return f"pip install 'kbase-ci[{extra}]'"


class MissingExtra(UsageError):
    """A command or module needs an extra that is not installed (exit 2)."""

    kind = "missing-extra"

    def __init__(self, who: str, extra: str, absent: list[str]) -> None:
        named = ", ".join(absent[:3]) + (f" and {len(absent) - 3} more" if absent[3:] else "")
        super().__init__(f"{who} needs the `{extra}` extra of kbase-ci ({named} not "
                         f"installed): {pip_line(extra)}")
        self.extra = extra
        self.absent = absent


def missing(extra: str) -> list[str]:
    """The import names of `extra` not installed (looked up, never imported)."""
    return [name for name in modules(extra) if find_spec(name) is None]


_deferred: list[str] = []
"""Who defers the packages' guards now (`deferred`)."""


@contextmanager
def deferred(who: str) -> Iterator[None]:
    """While `who` imports declarations that sit beside code needing an extra, the
    packages' own guards (`require` on import) wait for `who`'s check: the CLI builds a
    query command's parser from the query's module, which imports kbase_ci.index, and
    checks the command's extra after parsing, so that `--help` works in a core install
    and a run stops with the pip line (kbase_ci.cli.commandline.require_extra)."""
    _deferred.append(who)
    try:
        yield
    finally:
        _deferred.pop()


def require(extra: str, who: str) -> None:
    """Raise `MissingExtra` unless every module of `extra` is installed (not while a
    check of its own is `deferred`)."""
    absent = [] if _deferred else missing(extra)
    if absent:
        raise MissingExtra(who, extra, absent)
