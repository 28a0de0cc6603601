"""`kbase mv OLD NEW`: git mv plus rewriting every link the move would break."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.cli.main import main
from tests.conftest import git, run_kbase, write

Repo = Callable[..., Path]


def _status(root: Path) -> tuple[set[str], set[str]]:
    """(staged paths, paths with unstaged changes)."""
    staged = git(root, "diff", "--cached", "--name-only", "--no-renames").splitlines()
    return set(staged), set(git(root, "diff", "--name-only").splitlines())


def test_mv_rewrites_and_stages(make_repo: Repo) -> None:
    root = make_repo({
        "notes/Old.md": "# Old\n\n## Setup\n\nsee [y](../b/Y.md) and [[Old#Setup]]\n",
        "b/Y.md": "# Y\n",
        "A.md": "[[Old]] [[Old#Setup|s]] ![[Old]] [t](notes/Old.md) `[[Old]]`\n",
        "B.md": "[[notes/Old]]\n", "C.md": "nothing here\n",
    })
    proc = run_kbase("mv", "notes/Old.md", "archive/2024/New.md", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "moved notes/Old.md -> archive/2024/New.md",
        "A.md:1:1: [[Old]] -> [[New]]",
        "A.md:1:9: [[Old#Setup|s]] -> [[New#Setup|s]]",
        "A.md:1:25: ![[Old]] -> ![[New]]",
        "A.md:1:34: [t](notes/Old.md) -> [t](archive/2024/New.md)",
        "B.md:1:1: [[notes/Old]] -> [[archive/2024/New]]",
        "archive/2024/New.md:5:5: [y](../b/Y.md) -> [y](../../b/Y.md)",
        "archive/2024/New.md:5:24: [[Old#Setup]] -> [[New#Setup]]",
    ]
    assert (root / "A.md").read_text() == \
        "[[New]] [[New#Setup|s]] ![[New]] [t](archive/2024/New.md) `[[Old]]`\n"
    assert _status(root) == ({"A.md", "B.md", "notes/Old.md", "archive/2024/New.md"}, set())
    # The result is a commit kbase check accepts.
    assert run_kbase("check", "--staged", cwd=root).returncode == 0


def test_mv_leaves_files_with_unstaged_changes_unstaged(
        make_repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"notes/Old.md": "# Old\n", "A.md": "[[Old]]\n", "B.md": "[[Old]]\n"})
    write(root, {"B.md": "[[Old]] work in progress\n"})
    assert main(["--root", str(root), "mv", str(root / "notes/Old.md"),
                 str(root / "notes/New.md")]) == 0
    captured = capsys.readouterr()
    assert "left unstaged (they had unstaged changes before): " in captured.err
    assert "B.md" in captured.err.splitlines()[-1]
    assert (root / "B.md").read_text() == "[[New]] work in progress\n"
    assert _status(root) == ({"A.md", "notes/Old.md", "notes/New.md"}, {"B.md"})


@pytest.mark.parametrize(("old", "new", "message"), [
    ("notes/Old.md", "notes/Other.md", "notes/Other.md already exists"),
    ("notes/Untracked.md", "notes/X.md", "notes/Untracked.md is not a tracked note"),
    ("notes/Missing.md", "notes/X.md", "notes/Missing.md is not a tracked note"),
    ("notes/Old.md", "notes/X.txt", "notes/X.txt is not a note path"),
    ("notes/Old.md", "../outside.md", "is outside the vault"),
    ("notes/Old.md", "notes", "notes already exists"),
    ("notes/Old.md", ".git/Old.md", "inside a .git folder"),
    ("notes/Old.md", "notes/.GIT/Old.md", "inside a .git folder"),
])
def test_mv_refuses(make_repo: Repo, old: str, new: str, message: str) -> None:
    root = make_repo({"notes/Old.md": "# Old\n", "notes/Other.md": "[[Old]]\n"})
    write(root, {"notes/Untracked.md": "# U\n"})
    proc = run_kbase("mv", old, new, cwd=root)
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert (root / "notes/Old.md").exists() and (root / "notes/Other.md").read_text() == \
        "[[Old]]\n"
    assert _status(root) == (set(), set())


def test_mv_dry_run_moves_nothing(make_repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"notes/Old.md": "# Old\n", "A.md": "[[Old]]\n"})
    assert main(["--root", str(root), "mv", "--dry-run", str(root / "notes/Old.md"),
                 str(root / "notes/New.md")]) == 0
    out = capsys.readouterr().out
    assert "would move notes/Old.md -> notes/New.md" in out and "[[Old]] -> [[New]]" in out
    assert (root / "A.md").read_text() == "[[Old]]\n" and _status(root) == (set(), set())
