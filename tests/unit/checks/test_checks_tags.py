"""The `tags` check: policy cases from fixtures/checks/tags.txt, then the CLI, the hook
path, focus handling and config errors, all on real git repositories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.checks.checker import check_vault
from kbase_ci.errors import ConfigError
from kbase_ci.vault.config import parse_config
from kbase_ci.vault.notefiles import Vault
from tests.checkcases import Case, params, run_case
from tests.complexity import assert_linear
from tests.conftest import git, run_kbase, write

Repo = Callable[..., Path]


@pytest.mark.parametrize("case", params("tags.txt"))
def test_tag_policy_case(case: Case, make_repo: Repo) -> None:
    assert run_case(case, "tags", "tags", make_repo) == case.expected


POLICY = """\
tags:
  allowed: [rust, "project/*"]
  vocabularies:
    status: [active, done]
"""


def test_cli_reports_path_line_col_code_and_exits_1(make_repo: Repo) -> None:
    root = make_repo({".kbase.yml": POLICY, "notes/a.md": "# A\n\nSee #rust and #golang.\n",
                      "b.md": "#status/actve\n"})
    proc = run_kbase("check", "--all", "--select", "tags", cwd=root)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(ln.startswith("notes/a.md:3:15: KB201 #golang is not an allowed tag")
               for ln in lines), proc.stdout
    assert any(ln.startswith("b.md:1:1: KB203 #status/actve") and
               "did you mean #status/active?" in ln for ln in lines), proc.stdout
    assert len(lines) == 2


def test_cli_clean_vault_exits_0(make_repo: Repo) -> None:
    root = make_repo({".kbase.yml": POLICY, "a.md": "#rust #project/x #status/done\n"})
    proc = run_kbase("check", "--all", "--select", "tags", cwd=root)
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr


def test_staged_content_is_judged_not_the_work_tree(make_repo: Repo) -> None:
    root = make_repo({".kbase.yml": POLICY, "a.md": "#rust\n"})
    write(root, {"a.md": "#golang\n"})
    git(root, "add", "a.md")
    write(root, {"a.md": "#rust\n"})  # unstaged fix: the commit would still hold #golang
    proc = run_kbase("check", "--staged", "--select", "tags", "a.md", cwd=root)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "a.md:1:1: KB201 #golang" in proc.stdout


def test_case_duplicates_count_every_note_but_report_only_the_focus(make_repo: Repo) -> None:
    root = make_repo({"a.md": "#rust\n", "b.md": "#rust\n", "c.md": "#Rust\n", "d.md": "#Rust\n",
                      "e.md": "#RUST\n"})
    vault = Vault(root)
    only_a = check_vault(vault, [str(root / "a.md")], select=["tags"])
    assert [f.code for f in only_a.findings] == []  # `rust`, 2 notes, wins the tie on case
    only_c = check_vault(vault, [str(root / "c.md")], select=["tags"])
    (f,) = only_c.findings
    assert (f.path, f.line, f.col, f.code, f.severity) == ("c.md", 1, 1, "KB205", "warning")
    assert "#rust (2 notes), #RUST (1 note)" in f.message
    assert f.suggestion == "#rust"


def test_required_names_the_glob_and_tag(make_repo: Repo) -> None:
    root = make_repo({".kbase.yml": 'tags:\n  required:\n    "projects/**": [project, area]\n',
                      "projects/p.md": "#area/infra\n"})
    (f,) = check_vault(Vault(root), None, select=["tags"]).findings
    assert f.code == "KB204" and (f.line, f.col) == (1, 1)
    assert "`projects/**`" in f.message and "#project" in f.message


def test_select_by_code_runs_only_that_rule(make_repo: Repo) -> None:
    root = make_repo({".kbase.yml": 'tags:\n  allowed: [a]\n  pattern: "[a-z]+"\n',
                      "n.md": "#B\n"})
    codes = [f.code for f in check_vault(Vault(root), None, select=["KB202"]).findings]
    assert codes == ["KB202"]


@pytest.mark.parametrize(("text", "line", "col", "words"), [
    ('tags:\n  pattern: "[a-"\n', 2, 12, ["`tags.pattern` is not a regular expression",
                                          "missing ]"]),
    # RE2 matches in linear time and refuses what it cannot (issue 22)
    ('tags:\n  pattern: "(a)\\\\1"\n', 2, 12, ["linear time", "invalid escape"]),
    ('tags:\n  pattern: "a(?=b)"\n', 2, 12, ["linear time", "(?="]),
    ("tags:\n  allowed: 3\n", 2, 12, ["`tags.allowed` must be a list"]),
    ("tags:\n  vocabularies: [a, b]\n", 2, 17, ["`tags.vocabularies` must be a mapping"]),
    ("tags:\n  vocabularies:\n    status: [a, {b: 1}]\n", 3, 17,
     ["`tags.vocabularies.status[1]` must be a string"]),
    ("tags:\n  required:\n    '**': 5\n", 3, 11, ["`tags.required.**` must be a list"]),
    ("tags:\n  case_duplicates: maybe\n", 2, 20, ["`tags.case_duplicates` must be true or false"]),
    ("tags:\n  alowed: [a]\n", 2, 3, ["unknown key `tags.alowed`", "did you mean `allowed`"]),
])
def test_config_errors_are_located(text: str, line: int, col: int, words: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, ".kbase.yml")
    err = info.value
    assert (err.path, err.line, err.col) == (".kbase.yml", line, col), str(err)
    for w in words:
        assert w in str(err)


def test_bad_regex_exits_2_through_the_cli(make_repo: Repo) -> None:
    root = make_repo({".kbase.yml": "# policy\ntags:\n  pattern: '(unclosed'\n", "a.md": "#a\n"})
    proc = run_kbase("check", "--all", cwd=root)
    assert proc.returncode == 2
    assert ".kbase.yml:3:12: KB900 `tags.pattern` is not a regular expression" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_catastrophic_pattern_runs_in_linear_time(make_repo: Repo) -> None:
    """Issue 22: `(a+)+$` (a PR's own config in CI) against a 100k-character tag that
    almost matches backtracked for ever in Python's `re`; RE2 answers at once."""
    def repo(size: int) -> Path:
        return make_repo({".kbase.yml": "tags:\n  pattern: '(a+)+$'\n",
                          "a.md": "#" + "a" * size + "-b\n", "b.md": "#aaa #caf\u00e9\n"})

    # Backtracking is exponential in the tag: it never ends, and fails at the budget.
    proc = assert_linear(repo, lambda root: run_kbase("check", "--all", "--select", "tags",
                                                      cwd=root), 50_000, budget=60)
    assert proc.returncode == 1 and proc.stdout.count("KB202") == 2, proc.stdout
    assert "a.md:1:1: KB202" in proc.stdout and "b.md:1:6: KB202" in proc.stdout


def test_unicode_word_classes_stay_unicode(make_repo: Repo) -> None:
    root = make_repo({".kbase.yml": "tags:\n  pattern: '[\\w/-]+'\n",
                      "a.md": "#caf\u00e9 #na\u00efve/x #\u65e5\u672c #ok-1\n"})
    proc = run_kbase("check", "--all", "--select", "tags", cwd=root)
    assert proc.returncode == 0, proc.stdout
