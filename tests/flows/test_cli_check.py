"""`kbase check` end to end: the real entry point on the demo vault and small repos."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.cli.main import main
from kbase_ci.report.escape import command_data, command_property
from tests.conftest import FIXTURES, REPO, git, run_kbase, write

DEMO_FINDINGS = [
    ("Broken-Frontmatter.md", 4, "KB301"),
    ("Home.md", 38, "KB101"),
    ("Home.md", 39, "KB111"),
    ("Home.md", 40, "KB112"),
    ("Home.md", 41, "KB103"),
    ("Home.md", 42, "KB102"),
    ("Home.md", 43, "KB104"),
    ("Home.md", 44, "KB105"),
]


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """The demo vault as its own git repository."""
    root = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo-vault", root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "demo")
    return root


def test_demo_vault_text_output_and_exit_code(demo: Path) -> None:
    proc = run_kbase("check", "--all", cwd=demo)
    assert proc.returncode == 1, proc.stderr
    rows = [ln.split(":", 3) for ln in proc.stdout.splitlines()]
    assert [(p, int(ln), rest.split()[0]) for p, ln, _c, rest in rows] == DEMO_FINDINGS
    # `Uninstall` is not a slip of `Install`: no suggestion (kbase_ci.checks.suggestions).
    assert "Home.md:39:3: KB111 [[Getting Started#Uninstall]]: `Getting Started.md` has no " \
           "heading `Uninstall`" in proc.stdout.splitlines()
    assert "7 error(s), 1 warning(s) in 2 file(s); 9 of 9 notes checked" in proc.stderr


def test_demo_vault_from_the_kbase_repository_with_root(tmp_path: Path) -> None:
    # The Quick start command: --root points at a folder inside a bigger repository.
    proc = run_kbase("--root", str(FIXTURES / "demo-vault"), "check", "--all", cwd=tmp_path)
    assert proc.returncode == 1
    assert len(proc.stdout.splitlines()) == len(DEMO_FINDINGS)


def test_json_format(demo: Path) -> None:
    proc = run_kbase("check", "--format", "json", cwd=demo)
    data = json.loads(proc.stdout)
    assert data["version"] == 1
    assert data["vault"] == {"mode": "git-worktree", "notes": 9, "checked": 9}
    assert data["summary"]["by_code"]["KB101"] == 1
    assert data["summary"]["errors"] == 7 and data["summary"]["warnings"] == 1
    first = data["findings"][1]
    assert set(first) == {"path", "line", "col", "code", "check", "severity", "message",
                          "suggestion"}
    assert (first["path"], first["check"], first["severity"]) == ("Home.md", "links", "error")


def test_sarif_format(demo: Path) -> None:
    proc = run_kbase("check", "--format", "sarif", cwd=demo)
    sarif = json.loads(proc.stdout)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert {"KB101", "KB111", "KB301"} <= set(rules)
    res = run["results"]
    assert len(res) == len(DEMO_FINDINGS)
    for r in res:
        assert rules[r["ruleIndex"]] == r["ruleId"]
        loc = r["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] in ("Home.md", "Broken-Frontmatter.md")
        assert loc["region"]["startLine"] >= 1


def test_github_format_escapes_untrusted_text(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a,b:c%.md": "see [[100%: a, b\n"})
    write(root, {"a,b:c%.md": "see [[odd%,:name]]\n"})
    git(root, "add", "-A")
    proc = run_kbase("check", "--format", "github", cwd=root)
    assert proc.returncode == 1
    line = proc.stdout.strip()
    assert line.startswith("::error file=a%2Cb%3Ac%25.md,line=1,col=5,title=KB101 links::")
    assert "[[odd%25,:name]]" in line  # data part: only %, CR and LF are escaped
    assert command_data("a\r\nb%") == "a%0D%0Ab%25"
    assert command_property("x:y,z") == "x%3Ay%2Cz"


@pytest.mark.parametrize(("args", "codes"), [
    (["--select", "links"], {"KB101", "KB102", "KB103", "KB104", "KB105"}),
    (["--select", "KB11"], {"KB111", "KB112"}),
    (["--ignore", "links,sections"], {"KB301"}),
    (["--select", "frontmatter", "--select", "KB101"], {"KB101", "KB301"}),
])
def test_select_and_ignore(demo: Path, args: list[str], codes: set[str],
                           capsys: pytest.CaptureFixture[str],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(demo)
    assert main(["check", "--format", "json", *args]) == 1
    got = {f["code"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert got == codes


def test_unknown_code_is_a_usage_error(demo: Path) -> None:
    proc = run_kbase("check", "--select", "KB999,nonsense", cwd=demo)
    assert proc.returncode == 2
    assert "unknown check or code `KB999`" in proc.stderr


def test_files_limit_the_report_but_not_resolution(demo: Path) -> None:
    proc = run_kbase("check", "Reference.md", "Concepts/Linking.md", cwd=demo)
    assert proc.returncode == 0, proc.stdout  # their links resolve into notes not listed
    assert "2 of 9 notes checked" in proc.stderr
    proc = run_kbase("check", "Home.md", cwd=demo)
    assert proc.returncode == 1
    assert {ln.split(":")[0] for ln in proc.stdout.splitlines()} == {"Home.md"}


def test_files_outside_the_vault_are_ignored(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"notes/a.md": "[[b]]\n", "notes/b.md": "x\n", "src/x.md": "[[nope]]\n",
                      ".kbase.yml": "vault:\n  folders: [notes]\n"})
    proc = run_kbase("check", "src/x.md", "notes/a.md", cwd=root)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout == ""


def test_config_error_exits_2_with_location(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "x\n", ".kbase.yml": "links:\n  resolve_alias: true\n"})
    proc = run_kbase("check", cwd=root)
    assert proc.returncode == 2
    assert ".kbase.yml:2:3: KB900 unknown key `links.resolve_alias`; did you mean " \
           "`resolve_aliases`?" in proc.stderr


def test_clean_vault_exits_0(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "# A\nsee [[b#B]]\n", "b.md": "# B\n"})
    proc = run_kbase("check", cwd=root)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "2 of 2 notes checked, no problems" in proc.stderr


def test_outside_git_walks_and_says_so(tmp_path: Path) -> None:
    write(tmp_path, {"a.md": "[[missing]]\n"})
    proc = run_kbase("--root", str(tmp_path), "check", cwd=tmp_path)
    assert proc.returncode == 1
    assert "not a git repository: directory walk" in proc.stderr


def test_missing_root_exits_2(tmp_path: Path) -> None:
    proc = run_kbase("--root", str(tmp_path / "nope"), "check", cwd=tmp_path)
    assert proc.returncode == 2
    assert "vault folder does not exist" in proc.stderr


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_a_note_whose_name_is_not_utf8(make_repo: Callable[..., Path], fmt: str) -> None:
    # git lists the name with a surrogate escape. Neither the parse cache nor a terminal
    # whose encoding is strict UTF-8 (a desktop locale, unlike C.UTF-8) may crash on it.
    root = make_repo({"x\udcffy.md": "[[nope]]\n", "ok.md": "x\n"})
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONIOENCODING": "utf-8:strict"}
    for _ in range(2):  # cold, then warm cache
        proc = subprocess.run([sys.executable, "-m", "kbase_ci", "check", "--format", fmt],
                              cwd=root, env=env, capture_output=True, check=False)
        assert proc.returncode == 1, proc.stderr.decode("utf-8", "replace")
        out = proc.stdout.decode("utf-8")  # the output stays valid UTF-8
        assert "KB101" in out
        assert ("x%FFy.md" if fmt == "sarif" else "\\udcff") in out


def test_sarif_uris_percent_encode_note_names(make_repo: Callable[..., Path]) -> None:
    # `#` would start a fragment and `?` a query: code scanning would point elsewhere.
    root = make_repo({"Note #1.md": "[[nope]]\n", "What? 100%.md": "[[nope]]\n"})
    proc = run_kbase("check", "--format", "sarif", cwd=root)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(proc.stdout)["runs"][0]["results"]}
    assert uris == {"Note%20%231.md", "What%3F%20100%25.md"}


def test_mistyped_file_argument_is_named(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "x\n"})
    proc = run_kbase("check", "nonexist.md", cwd=root)
    assert proc.returncode == 0
    assert "ignored 1 argument(s) that are not notes of this vault" in proc.stderr
    assert "nonexist.md" in proc.stderr


def test_text_output_cannot_inject_workflow_commands(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"::error::x.md": "[[gone\x1b[31m]]\n"})
    proc = run_kbase("check", cwd=root)
    assert proc.returncode == 1
    line = proc.stdout.splitlines()[0]
    assert line.startswith("./::error::x.md:1:1: KB101")
    assert "\x1b" not in proc.stdout and "\\x1b[31m" in line
