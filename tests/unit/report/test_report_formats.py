"""kbase_ci.report.findings, .sarif and .terminal: one check report (a real `check_vault`
of a small repository: a broken link, an error, and an ambiguous one, a warning) in each
output form, and what a long command prints off a terminal."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.checks.checker import CheckReport, check_vault
from kbase_ci.parsed import Finding
from kbase_ci.report.findings import (
    check_json,
    display_path,
    summary_line,
    write_github,
    write_text,
)
from kbase_ci.report.sarif import to_sarif
from kbase_ci.report.terminal import StageProgress
from kbase_ci.vault.notefiles import Vault

Repo = Callable[..., Path]
HOME = "# Home\n\nSee [[Twin]] and\n[[Missing]] here.\n"


@pytest.fixture
def vault(make_repo: Repo) -> tuple[Path, CheckReport]:
    root = make_repo({"notes/Home.md": HOME, "a/Twin.md": "# A\n", "b/Twin.md": "# B\n",
                      "c d#e.md": "[[Gone]]\n"})
    return root, check_vault(Vault(root))


def test_text_one_line_per_finding_with_its_source(vault: tuple[Path, CheckReport],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root, report = vault
    monkeypatch.chdir(root / "notes")  # paths are shown from where the command ran
    out = io.StringIO()
    write_text(report, root, out, source_lines=True)
    assert out.getvalue().splitlines() == [
        "../c d#e.md:1:1: KB101 [[Gone]]: no note named `Gone`",
        "    [[Gone]]", "    ^",
        "Home.md:3:5: KB103 (warning) [[Twin]] matches 2 notes (a/Twin.md, b/Twin.md); "
        "using a/Twin.md: write the folder to choose",
        "    See [[Twin]] and", "        ^",
        "Home.md:4:1: KB101 [[Missing]]: no note named `Missing`",
        "    [[Missing]] here.", "    ^"]


def test_text_in_colour_warnings_yellow_errors_red(vault: tuple[Path, CheckReport]) -> None:
    root, report = vault
    out = io.StringIO()
    write_text(report, root, out, color=True)
    lines = out.getvalue().splitlines()
    assert "\x1b[33mKB103 (warning)\x1b[0m" in lines[1]
    assert "\x1b[31mKB101\x1b[0m" in lines[0] and "\x1b[31mKB101\x1b[0m" in lines[2]
    assert all(line.startswith("\x1b[1m") for line in lines)


def test_summary_and_json_count_errors_and_warnings(vault: tuple[Path, CheckReport]) -> None:
    _, report = vault
    assert summary_line(report) == ("kbase: 2 error(s), 1 warning(s) in 2 file(s); "
                                    "4 of 4 notes checked")
    got = check_json(report).to_json()
    assert got["summary"] == {"findings": 3, "errors": 2, "warnings": 1,
                              "by_code": {"KB101": 2, "KB103": 1}, "fail_on": "error",
                              "failing": 2, "new_only": False, "pre_existing": 0}
    assert [f["code"] for f in got["findings"]] == ["KB101", "KB103", "KB101"]
    assert json.loads(json.dumps(got)) == got


def test_github_annotations_escape_paths_and_messages(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    found = [Finding("a,b:c.md", 2, 3, "KB101", "50% broken\nsecond line", check="links"),
             Finding("w.md", 1, 1, "KB205", "spelled differently", "warning", "tags")]
    out = io.StringIO()
    write_github(found, root, tmp_path, out)
    assert out.getvalue().splitlines() == [
        "::error file=vault/a%2Cb%3Ac.md,line=2,col=3,title=KB101 links::"
        "50%25 broken%0Asecond line",
        "::warning file=vault/w.md,line=1,col=1,title=KB205 tags::spelled differently"]


def test_display_path_from_another_folder(tmp_path: Path) -> None:
    assert display_path(tmp_path / "v", "n/a.md", tmp_path / "elsewhere") == "../v/n/a.md"
    assert display_path(tmp_path / "v", "a.md", tmp_path / "v") == "a.md"


def test_sarif_results_point_at_their_rules_and_encode_uris(
        vault: tuple[Path, CheckReport]) -> None:
    root, report = vault
    sarif = to_sarif(report.findings, root, root)
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["KB101", "KB103", "KB101"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    assert [r["level"] for r in results] == ["error", "warning", "error"]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    assert uris == ["c%20d%23e.md", "notes/Home.md", "notes/Home.md"]
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in results]
    assert regions[1] == {"startLine": 3, "startColumn": 5}
    prints = [r["partialFingerprints"]["kbase/v1"] for r in results]
    assert len(set(prints)) == 3  # one alert per finding ...
    again = to_sarif(report.findings, root, root)["runs"][0]["results"]
    assert [r["partialFingerprints"]["kbase/v1"] for r in again] == prints  # ... kept


def test_a_long_command_off_a_terminal_prints_a_line_per_stage() -> None:
    out = io.StringIO()
    with StageProgress(out, tty=False, color=False) as progress:
        progress("parse", 0, 3)
        progress("parse", 3, 3)
        assert out.getvalue() == ""  # a stage is reported when it ends ...
        progress("embed", 1, 2)
        assert out.getvalue().count("\n") == 1  # ... which the next one starting does
    assert re.fullmatch(r"kbase: parse 3/3 in \d+\.\d s\nkbase: embed 1/2 in \d+\.\d s\n",
                        out.getvalue())


@pytest.mark.parametrize(("root", "path", "base"), [
    ("v", "n/a.md", "."), ("v", "a.md", "v"), ("v", "a.md", "v/n"), ("v", "a.md", "w/x"),
    ("v/", "./n//a.md", "v"), ("v", "../a.md", "v/n"), ("vv", "a.md", "v"), ("v", "a.md", "/")])
def test_display_path_is_what_relpath_gives(tmp_path: Path, root: str, path: str,
                                            base: str) -> None:
    # Issue 40: relpath per finding cost 0.3 s of a 3,000-finding report; the shortcut
    # must answer exactly as it did.
    top, start = tmp_path / root, tmp_path / base if base != "/" else Path("/")
    assert display_path(top, path, start) == os.path.relpath(top / path, start)
