"""The README stays true: hook ids, commands and the two Quick start commands."""

from __future__ import annotations

import re
import tomllib

from ruamel.yaml import YAML

from kbase_ci.cli.commandline import COMMANDS, build_parser
from tests.conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
PROJECT_URLS = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))[
    "project"]["urls"]


def _hook_ids() -> list[str]:
    hooks = YAML(typ="safe").load((REPO / ".pre-commit-hooks.yaml").read_text())
    return [h["id"] for h in hooks]


def test_every_hook_id_is_in_the_readme() -> None:
    ids = _hook_ids()
    assert "kbase-check" in ids
    missing = [i for i in ids if i not in README]
    assert not missing, f"hook ids missing from README.md: {missing}"


def test_hooks_run_the_real_command() -> None:
    hooks = YAML(typ="safe").load((REPO / ".pre-commit-hooks.yaml").read_text())
    for h in hooks:
        assert h["language"] == "python"
        assert h["entry"].startswith("kbase "), h
        assert h["id"].startswith("kbase-")


def test_every_command_is_documented() -> None:
    docs = README + "".join(p.read_text(encoding="utf-8") for p in (REPO / "docs").glob("*.md"))
    for name in COMMANDS:
        assert f"kbase {name}" in docs, f"`kbase {name}` is not documented"


def test_every_command_has_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in COMMANDS:
        assert sub.choices[name].description or sub.choices[name].format_help(), name
        assert name in {c.dest for c in sub._choices_actions}, f"{name} has no help line"


def test_quick_start_has_exactly_two_commands() -> None:
    section = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(?:sh|bash|console)\n(.*?)```", section, re.S)
    commands = [ln for b in blocks for ln in b.splitlines() if ln.strip()]
    assert len(commands) == 2, commands
    install_run, tests = commands
    assert "pip install" in install_run and "fixtures/demo-vault" in install_run
    assert tests == 'python -m pip install -e ".[test]" && python -m pytest'
    ci = (REPO / ".ci" / "run").read_text()
    assert tests in ci, ".ci/run must run the README's test command verbatim"


def test_ci_runs_the_linters_beside_the_tests() -> None:
    """The linters left pytest (tests/unit is for behaviour, in seconds); CI must still
    run each of them, after the whole suite, and fail when one fails."""
    ci = (REPO / ".ci" / "run").read_text()
    tests_at = ci.index('python -m pip install -e ".[test]" && python -m pytest')
    for linter in ("ruff check kbase_ci tests bench", "mypy", "lint-imports"):
        at = ci.index(linter, tests_at)
        line = ci[ci.rindex("\n", 0, at) + 1:ci.index("\n", at)]
        assert "failed+=" in line, f".ci/run ignores a failure of {linter}: {line}"
    assert "exit 1" in ci.split("failed+=")[-1]


def test_readme_links_work_on_pypi() -> None:
    """PyPI shows README.md without the repository around it: a relative link breaks
    there. Every link is absolute, and one into this repository names a file it has."""
    home = "https://github.com/kbase-ci/kbase-ci/"
    assert PROJECT_URLS["Source"] + "/" == home
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    assert len(links) > 20
    for link in links:
        if link == "note.md":  # the `.kbase.yml` sample's comment, not a link
            continue
        assert link.startswith(("https://", "#")), f"relative link in README.md: {link}"
        if link.startswith(home):
            rel = re.sub(r"^(blob|tree)/main/", "", link.removeprefix(home)).split("#")[0]
            assert (REPO / rel).exists(), f"README.md links to a missing file: {link}"


def test_ci_smoke_tests_the_install_on_the_other_pythons() -> None:
    """`pip install .` and `kbase check` on 3.12 and 3.13 when present, a failure
    counted, an absence said (docs/release.md)."""
    ci = (REPO / ".ci" / "run").read_text()
    assert "for v in 3.12 3.13; do" in ci
    assert 'smoke "$v" "$py" || failed+=("python$v")' in ci
    assert "fixtures/demo-vault check --all" in ci and "is skipped" in ci
