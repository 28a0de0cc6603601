"""The extras of kbase_ci.extras and pyproject.toml say the same thing, every command is
either core or guarded, and the guard's message ends with the pip line to run.
(tests/slow/test_core_install.py runs the guard in a real core-only install.)"""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import packages_distributions

import pytest

from kbase_ci.cli.commandline import COMMAND_EXTRAS, commands
from kbase_ci.errors import UsageError
from kbase_ci.extras import EXTRAS, INCLUDES, MissingExtra, missing, modules, pip_line, require
from kbase_ci.query.registry import COMMANDS as QUERIES
from kbase_ci.query.registry import EXTRA
from tests.conftest import REPO

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
OPTIONAL: dict[str, list[str]] = PROJECT["optional-dependencies"]
CORE_COMMANDS = {"check", "fix", "mv", "new", "handover"}


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9_.-]+", requirement)
    assert match, requirement
    return match.group(0).lower().replace("_", "-").replace(".", "-")


def _self_extras(extra: str) -> set[str]:
    """The extras `kbase-ci[a,b]` requirements of an extra name."""
    got: set[str] = set()
    for req in OPTIONAL[extra]:
        m = re.fullmatch(r"kbase-ci\[([a-z,]+)\]", req)
        if m:
            got.update(m.group(1).split(","))
    return got


def _distributions(extra: str) -> set[str]:
    own = {_name(r) for r in OPTIONAL[extra] if not r.startswith("kbase-ci[")}
    return own.union(*(_distributions(e) for e in _self_extras(extra)))


def test_every_extra_is_declared_with_what_it_includes() -> None:
    for extra in EXTRAS:
        assert extra in OPTIONAL, f"pyproject.toml has no [{extra}] extra"
        assert _self_extras(extra) == set(INCLUDES.get(extra, ())), extra
    assert _self_extras("all") == set(EXTRAS)
    assert "all" in _self_extras("test"), "the suite tests every extra"


def test_each_import_name_comes_from_its_extra() -> None:
    """A name the guard looks for is installed by that extra (else the pip line it
    prints would not help), and no extra's package is a core dependency."""
    dists = {k: {_name(d) for d in v} for k, v in packages_distributions().items()}
    core = {_name(r) for r in PROJECT["dependencies"]}
    for extra in EXTRAS:
        declared = _distributions(extra)
        assert not declared & core, (extra, declared & core)
        for module in modules(extra):
            assert dists.get(module, set()) & declared, (extra, module, dists.get(module))


def test_every_command_is_core_or_guarded() -> None:
    guarded = {**COMMAND_EXTRAS, **dict.fromkeys(QUERIES, EXTRA)}
    assert set(guarded).isdisjoint(CORE_COMMANDS)
    assert set(commands()) == set(guarded) | CORE_COMMANDS
    assert set(guarded.values()) <= set(EXTRAS)


def test_a_full_install_passes_the_guard() -> None:
    for extra in EXTRAS:
        assert missing(extra) == []
        require(extra, "this test")


def test_the_error_is_a_usage_error_ending_with_the_pip_line() -> None:
    exc = MissingExtra("`kbase search`", "search", ["numpy", "bm25s", "Stemmer", "usearch"])
    assert isinstance(exc, UsageError)  # exit 2 (cli.main.EXIT_CODES)
    assert str(exc) == ("`kbase search` needs the `search` extra of kbase-ci (numpy, bm25s, "
                        "Stemmer and 1 more not installed): pip install 'kbase-ci[search]'")
    assert str(exc).endswith(pip_line("search"))


@pytest.mark.parametrize("extra", sorted(INCLUDES))
def test_an_extra_needs_what_it_includes(extra: str) -> None:
    for part in INCLUDES[extra]:
        assert set(modules(part)) <= set(modules(extra))


def test_json_names_the_missing_extra() -> None:
    from kbase_ci.errors import error_json

    exc = MissingExtra("`kbase mcp`", "mcp", ["mcp"])
    body = error_json(exc.kind, str(exc), exit_code=2, exc=exc)["error"]
    assert body["kind"] == "missing-extra"
    assert body["message"].endswith("pip install 'kbase-ci[mcp]'")
