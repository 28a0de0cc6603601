"""`kbase ci --fail-on`: which findings (new, all, none) and from which severity on
(error by default, or warning) fail the run (issue 29); the report carries both."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.ci.cireport import from_json
from tests.ci_support import run_ci
from tests.conftest import git, write


@pytest.fixture
def pr(make_repo: Callable[..., Path]) -> tuple[Path, str]:
    """A PR that adds only a warning (KB103: a second `Dup.md` makes `[[Dup]]` ambiguous)."""
    root = make_repo({"a/Dup.md": "# a\n", "Home.md": "[[Dup]]\n"})
    base = git(root, "rev-parse", "HEAD").strip()
    write(root, {"b/Dup.md": "# b\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "another Dup")
    return root, base


@pytest.mark.parametrize("fail_on, code, failing", [
    ("new", 0, 0), ("new,error", 0, 0), ("new,warning", 1, 1), ("warning", 1, 1),
    ("all,warning", 1, 1), ("none,warning", 0, 0)])
def test_warnings_fail_the_run_only_when_asked(pr: tuple[Path, str], tmp_path: Path,
                                               fail_on: str, code: int, failing: int) -> None:
    root, base = pr
    out = tmp_path / "report"
    proc = run_ci(root, {**_env(), "GITHUB_EVENT_NAME": ""}, "--base", base, "--fail-on",
                  fail_on, "--no-comment", "--out", str(out))
    assert proc.returncode == code, proc.stderr
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert [f["code"] for f in data["findings"] if f["status"] == "new"] == ["KB103"]
    report = from_json(data)
    assert report.failing == failing
    assert report.fail_level == ("warning" if "warning" in fail_on else "error")


def test_a_bad_fail_on_word_is_a_usage_error(pr: tuple[Path, str]) -> None:
    root, base = pr
    proc = run_ci(root, _env(), "--base", base, "--fail-on", "new,loud", "--no-comment")
    assert proc.returncode == 2 and "'loud' is none of new, all, none, error, warning" \
        in proc.stderr


def test_a_report_without_fail_level_reads_as_error() -> None:
    from kbase_ci.ci.cireport import CiReport

    data = CiReport("push", "", "https://github.com", "a" * 40, None, None, "", "all",
                    1).to_json()
    del data["fail_level"]
    assert from_json(data).fail_level == "error"


def _env() -> dict[str, str]:
    import os

    from tests.conftest import GIT_ENV, REPO

    return {**{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")},
            **GIT_ENV, "PYTHONPATH": str(REPO)}
