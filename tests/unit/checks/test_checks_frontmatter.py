"""The `frontmatter` check: policy cases from fixtures/checks/frontmatter.txt, then the
CLI, staged text, focus handling and config errors, all on real git repositories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.checks.checker import check_vault
from kbase_ci.errors import ConfigError
from kbase_ci.vault.config import parse_config
from kbase_ci.vault.notefiles import Vault
from tests.checkcases import Case, params, run_case
from tests.conftest import git, run_kbase, write

Repo = Callable[..., Path]


@pytest.mark.parametrize("case", params("frontmatter.txt"))
def test_frontmatter_policy_case(case: Case, make_repo: Repo) -> None:
    assert run_case(case, "frontmatter", "frontmatter", make_repo) == case.expected


POLICY = """\
frontmatter:
  required:
    "projects/**": [title, status]
  types:
    due: date
    up: link
  allowed:
    status: [active, done]
"""


def test_cli_reports_path_line_col_code_and_exits_1(make_repo: Repo) -> None:
    root = make_repo({
        ".kbase.yml": POLICY,
        "projects/p.md": "---\ntitle: P\nstatus: actve\ndue: someday\nup: [[Home]]\n---\n# P\n",
        "projects/q.md": "# no frontmatter\n",
    })
    proc = run_kbase("check", "--all", "--select", "frontmatter", cwd=root)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("projects/p.md:3:9: KB312 `status`: `actve` is not allowed")
    assert lines[0].endswith("did you mean `active`?")
    assert lines[1].startswith("projects/p.md:4:1: KB311 `due` must be an ISO date")
    assert lines[2].startswith("projects/p.md:5:1: KB311 `up` must be a quoted wikilink")
    assert 'write "[[...]]"' in lines[2]
    assert lines[3].startswith("projects/q.md:1:1: KB310 missing frontmatter key `status`")
    assert lines[4].startswith("projects/q.md:1:1: KB310 missing frontmatter key `title`")
    assert len(lines) == 5


def test_positions_come_from_the_staged_text(make_repo: Repo) -> None:
    root = make_repo({".kbase.yml": POLICY, "a.md": "---\ndue: 2024-01-01\n---\n"})
    write(root, {"a.md": "---\nx: 1\ny: 2\ndue: never\n---\n"})
    git(root, "add", "a.md")
    write(root, {"a.md": "---\ndue: never\n---\n"})  # unstaged: not what is committed
    proc = run_kbase("check", "--staged", "--select", "frontmatter", "a.md", cwd=root)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith("a.md:4:1: KB311 `due`")


def test_alias_collision_is_reported_only_in_focus_notes(make_repo: Repo) -> None:
    root = make_repo({"a.md": "---\naliases: [Shared]\n---\n",
                      "b.md": "---\naliases:\n  - other\n  - shared\n---\n",
                      "Shared.md": "the note named Shared\n"})
    vault = Vault(root)
    (f,) = check_vault(vault, [str(root / "b.md")], select=["frontmatter"]).findings
    assert (f.path, f.line, f.col, f.code) == ("b.md", 4, 5, "KB313")
    assert "the name of `Shared.md`" in f.message and "an alias of `a.md`" in f.message
    everything = check_vault(vault, None, select=["KB313"]).findings
    assert sorted(f.path for f in everything) == ["a.md", "b.md"]


def test_no_policy_means_no_policy_findings(make_repo: Repo) -> None:
    root = make_repo({"a.md": "---\nstatus: whatever\ndue: 3\n---\n", "b.md": "text\n"})
    assert check_vault(Vault(root), None, select=["frontmatter"]).findings == ()


@pytest.mark.parametrize(("text", "line", "col", "words"), [
    ("frontmatter:\n  types:\n    due: datetime\n", 3, 10,
     ["`frontmatter.types.due` must be one of string | number", "not 'datetime'"]),
    ("frontmatter:\n  types: [date]\n", 2, 10, ["`frontmatter.types` must be a mapping"]),
    ("frontmatter:\n  required:\n    '**': {title: 1}\n", 3, 11,
     ["`frontmatter.required.**` must be a list"]),
    ("frontmatter:\n  allowed:\n    status: [a, [b]]\n", 3, 17,
     ["`frontmatter.allowed.status[1]` must be a string, number or boolean"]),
    ("frontmatter:\n  allowed:\n    status:\n      - a\n      - {x: 1}\n", 5, 9,
     ["`frontmatter.allowed.status[1]`"]),
    ("frontmatter: true\n", 1, 14, ["`frontmatter` must be a mapping"]),
    ("frontmatter:\n  requires: {}\n", 2, 3, ["unknown key `frontmatter.requires`",
                                                "did you mean `required`"]),
])
def test_config_errors_are_located(text: str, line: int, col: int, words: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, "cfg/.kbase.yml")
    err = info.value
    assert (err.path, err.line, err.col) == ("cfg/.kbase.yml", line, col), str(err)
    for w in words:
        assert w in str(err)


def test_config_error_exits_2_through_the_cli(make_repo: Repo) -> None:
    root = make_repo({".kbase.yml": "frontmatter:\n  types:\n    due: when\n", "a.md": "x\n"})
    proc = run_kbase("check", "--all", cwd=root)
    assert proc.returncode == 2
    assert ".kbase.yml:3:10: KB900 `frontmatter.types.due` must be one of" in proc.stderr
    assert "Traceback" not in proc.stderr
