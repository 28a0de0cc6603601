"""Severity the way linters do it (issue 29): registry defaults, `checks.severity`,
`checks.per_path`, `links.unresolved`, inline `kbase-ignore` comments and the unused
ones (KB901), `--fail-on`, and the severity in every output format.

The scenario vault is fixtures/hooks/severity/vault; its `kbase check --all` output is
fixtures/hooks/severity/expected.txt.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.checks.checkregistry import REGISTRY, default_severities
from tests.conftest import FIXTURES, git, run_kbase, write

SCENARIO = FIXTURES / "hooks" / "severity"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "severity"
    shutil.copytree(SCENARIO / "vault", root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "init")
    return root


def test_every_code_has_a_default_severity_in_the_registry() -> None:
    defaults = default_severities()
    assert set(defaults) == {code for c in REGISTRY for code in c.codes}
    assert {c for c, s in defaults.items() if s == "warning"} == {
        "KB003", "KB004", "KB103", "KB205", "KB408", "KB901"}


def test_a_note_that_is_not_utf8_is_an_error(make_repo: Callable[..., Path]) -> None:
    # README's hook table says kbase-input rejects it: the finding fails the check
    root = make_repo({"Latin.md": "# Caf\xe9\n\nsee [[Other]]\n".encode("latin-1"),
                      "Other.md": "# Other\n"})
    proc = run_kbase("check", "--all", cwd=root)
    assert proc.returncode == 1
    assert proc.stdout.startswith("Latin.md:1:6: KB001 invalid UTF-8 (byte 0xe9)")
    proc = run_kbase("check", "--all", "--select", "input", cwd=root)
    assert proc.returncode == 1 and "1 error(s), 0 warning(s)" in proc.stderr


def test_the_scenario_vault_reports_exactly_the_expected_findings(vault: Path) -> None:
    proc = run_kbase("check", "--all", cwd=vault)
    assert proc.stdout == (SCENARIO / "expected.txt").read_text(encoding="utf-8")
    # Errors remain (KB102 attachment, KB205 raised to error, strict/ forward link, KB111).
    assert proc.returncode == 1
    assert "4 error(s), 6 warning(s) in 4 file(s)" in proc.stderr


def test_checks_severity_per_path_and_unresolved_policy(vault: Path) -> None:
    lines = run_kbase("check", "--all", cwd=vault).stdout.splitlines()
    by_code = {(ln.split(":")[0], ln.split()[1], "(warning)" in ln) for ln in lines}
    assert ("Home.md", "KB205", False) in by_code  # checks.severity: warning -> error
    assert ("Home.md", "KB112", True) in by_code  # checks.severity: error -> warning
    assert ("Home.md", "KB101", True) in by_code  # links.unresolved: warning
    assert ("Home.md", "KB102", False) in by_code  # a missing attachment stays an error
    assert ("strict/spec.md", "KB101", False) in by_code  # unresolved_per_path: error
    assert not any(p.startswith(("drafts/", "reference/")) for p, _c, _w in by_code)


def test_inline_suppressions_and_unused_ones(vault: Path) -> None:
    out = run_kbase("check", "suppressed.md", "file-level.md", cwd=vault).stdout
    assert "Gone One" not in out and "Gone Two" not in out  # next line; same line
    assert "No Such Heading" not in out  # KB111 silenced
    assert "Gone Four" not in out and "Gone Five" not in out  # kbase-ignore-file KB101
    assert "file-level.md:4:56: KB111 [[Page#Nowhere]]" in out  # other codes still count
    assert "suppressed.md:11:1: KB901 (warning) kbase-ignore KB101 silenced nothing" in out
    assert "suppressed.md:14:1: KB901 (warning) kbase-ignore names `KB1O1`" in out
    assert "suppressed.md:17:74: KB101 (warning) [[Gone Three]]" in out  # in code: text


def test_unused_suppressions_are_judged_only_when_their_codes_were_checked(
        vault: Path) -> None:
    # `--select tags` did not look for KB101: it cannot call a KB101 suppression unused.
    out = run_kbase("check", "--select", "tags,suppressions", "suppressed.md",
                    cwd=vault).stdout
    assert "silenced nothing" not in out
    assert "names `KB1O1`" in out
    out = run_kbase("check", "--select", "links,suppressions", "suppressed.md",
                    cwd=vault).stdout
    assert "suppressed.md:11:1: KB901" in out


def test_checks_severity_off_and_kb901_itself_configurable(vault: Path) -> None:
    write(vault, {".kbase.yml": "checks:\n  severity:\n    KB1: off\n    suppressions: off\n"})
    proc = run_kbase("check", "--all", cwd=vault)
    # KB1 (every link code, KB111/KB112 included) and KB901 are off; KB205 is left, a
    # warning by default again: nothing fails.
    assert {ln.split()[1] for ln in proc.stdout.splitlines()} == {"KB205"}
    assert proc.returncode == 0


def test_warnings_do_not_fail_unless_fail_on_warning(vault: Path) -> None:
    write(vault, {".kbase.yml": "links:\n  unresolved: warning\n"})
    proc = run_kbase("check", "drafts/idea.md", cwd=vault)
    assert proc.returncode == 0, proc.stdout
    assert "drafts/idea.md:3:5: KB101 (warning)" in proc.stdout
    assert "not failing: warnings fail with --fail-on warning" in proc.stderr
    assert run_kbase("check", "--fail-on", "warning", "drafts/idea.md",
                     cwd=vault).returncode == 1
    assert run_kbase("check", "--fail-on", "error", "drafts/idea.md", cwd=vault).returncode == 0


def test_severity_in_json_sarif_and_github_outputs(vault: Path) -> None:
    data = json.loads(run_kbase("check", "--all", "--format", "json", cwd=vault).stdout)
    sev = {(f["path"], f["code"]): f["severity"] for f in data["findings"]}
    assert sev[("Home.md", "KB205")] == "error" and sev[("Home.md", "KB112")] == "warning"
    assert data["summary"]["fail_on"] == "error" and data["summary"]["failing"] == 4
    sarif = json.loads(run_kbase("check", "--all", "--format", "sarif", cwd=vault).stdout)
    run = sarif["runs"][0]
    levels = {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], r["ruleId"]):
              r["level"] for r in run["results"]}
    assert levels[("Home.md", "KB205")] == "error" and levels[("Home.md", "KB103")] == "warning"
    rules = {r["id"]: r["defaultConfiguration"]["level"] for r in run["tool"]["driver"]["rules"]}
    assert rules["KB103"] == "warning" and rules["KB101"] == "error"
    gh = run_kbase("check", "--all", "--format", "github", cwd=vault).stdout
    assert "::warning file=Home.md,line=3,col=19,title=KB101 links::" in gh
    assert "::error file=Home.md,line=3,col=54,title=KB102 links::" in gh


@pytest.mark.parametrize("config, where, word", [
    ("checks:\n  severity:\n    KB103: warning\n    KB1O3: off\n", "4:5", "KB1O3"),
    ("checks:\n  per_path:\n    \"a/**\": [links, KB2, lnks]\n", "3:26", "lnks"),
    ("checks:\n  select: [links, tgs]\n", "2:19", "tgs"),
])
def test_unknown_codes_in_the_config_are_located_config_errors(
        vault: Path, config: str, where: str, word: str) -> None:
    write(vault, {".kbase.yml": config})
    for _ in range(2):  # the second run reads the config memo, which keeps no positions
        proc = run_kbase("check", "--all", cwd=vault)
        assert proc.returncode == 2
        assert f".kbase.yml:{where}: KB900 " in proc.stderr and f"`{word}`" in proc.stderr
    if word == "lnks":
        assert "did you mean `links`?" in proc.stderr


def test_bad_severity_level_is_a_config_error(vault: Path) -> None:
    write(vault, {".kbase.yml": "links:\n  unresolved: maybe\n"})
    proc = run_kbase("check", "--all", cwd=vault)
    assert proc.returncode == 2
    assert ".kbase.yml:2:15: KB900 `links.unresolved` must be one of error | warning | off" \
        in proc.stderr
