"""`kbase check --staged` and `fix --staged` on a commit of 10,000 notes, then on one that
renames all of them: every finding, in order (tests/flows/test_breakage.py has the small
cases). Four cold parses of 10k notes: correctness at scale, not a speed (bench/ has
the figures)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.cli.main import main
from tests.conftest import git, repo_lines, staged_check

Repo = Callable[..., Path]


def test_ten_thousand_files_in_one_commit(make_repo: Repo,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    n = 10_000
    files: dict[str, str | bytes] = {
        f"notes/n{i:05}.md": f"# N{i}\n\nnext [[notes/n{(i + 1) % n:05}]] [[n{i:05}#N{i}]]\n"
        for i in range(n)}
    files["Index.md"] = "[[notes/n00000]] [[missing-one]]\n"
    root = make_repo(files, commit=False)
    rc, out = staged_check(root, capsys)  # first commit: 10,001 added notes
    assert rc == 1 and repo_lines(out) == ["Index.md:1:18: KB101 [[missing-one]]: no note named "
                                       "`missing-one`"]
    git(root, "commit", "-q", "-m", "init")
    git(root, "mv", "notes", "moved")  # 10,000 renames in one commit
    rc, out = staged_check(root, capsys)
    lines = repo_lines(out)
    assert rc == 1 and len(lines) == n + 1
    assert lines[0] == ("Index.md:1:1: KB101 [[notes/n00000]]: `notes/n00000.md` was renamed "
                        "to `moved/n00000.md` in this commit; did you mean [[moved/n00000]]?")
    assert lines[-1].startswith("moved/n09999.md:3:6: KB101 [[notes/n00000]]: ")
    assert main(["--root", str(root), "fix", "--staged"]) == 1
    assert (root / "moved/n00042.md").read_text() == \
        "# N42\n\nnext [[moved/n00043]] [[n00042#N42]]\n"
    git(root, "add", "-A")
    capsys.readouterr()
    # The fixer touched Index.md; its old broken link is pre-existing, not blocking.
    rc, out = staged_check(root, capsys)
    assert rc == 0 and repo_lines(out) == []
    rc, out = staged_check(root, capsys, "--all-findings")
    assert rc == 1 and repo_lines(out) == ["Index.md:1:18: KB101 [[missing-one]]: no note named "
                                       "`missing-one`"]
