"""Issue 28: two notes of identical content renamed in one commit. git pairs each new
path with a source of the same blob by its own rule, so `notes/alpha.md -> archive/
y-alpha.md` came out as `notes/alpha.md -> archive/x-beta.md`; `kbase fix --staged`
rewrote `[[alpha]]` to `[[x-beta]]` and the check passed on crossed links. The moves are
now paired by path similarity; when that cannot tell them apart, nothing is rewritten
and the check says the rename is ambiguous."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import git, run_kbase

SAME = "# Same\n\nidentical body\n"


def _renamed(make_repo: Callable[..., Path], alpha_to: str, beta_to: str) -> Path:
    root = make_repo({"notes/alpha.md": SAME, "notes/beta.md": SAME,
                      "Home.md": "# Home\n\n[[alpha]] and [[beta]]\n"})
    (root / "archive").mkdir()
    git(root, "mv", "notes/alpha.md", alpha_to)
    git(root, "mv", "notes/beta.md", beta_to)
    return root


@pytest.mark.parametrize(("alpha_to", "beta_to"), [
    ("archive/y-alpha.md", "archive/x-beta.md"),  # git pairs these crossed
    ("archive/alpha-2.md", "archive/gamma.md"),  # one sure pair; the other is all that is left
])
def test_identical_notes_renamed_together_are_paired_by_path(
        make_repo: Callable[..., Path], alpha_to: str, beta_to: str) -> None:
    root = _renamed(make_repo, alpha_to, beta_to)
    fix = run_kbase("fix", "--staged", cwd=root)
    assert fix.returncode in (0, 1), fix.stderr
    want = f"[[{Path(alpha_to).stem}]] and [[{Path(beta_to).stem}]]"
    assert (root / "Home.md").read_text(encoding="utf-8") == f"# Home\n\n{want}\n"
    git(root, "add", "Home.md")
    check = run_kbase("check", "--staged", cwd=root)
    assert check.returncode == 0, check.stdout + check.stderr


def test_an_ambiguous_pairing_is_reported_never_rewritten(
        make_repo: Callable[..., Path]) -> None:
    root = _renamed(make_repo, "archive/one.md", "archive/two.md")
    before = (root / "Home.md").read_text(encoding="utf-8")
    run_kbase("fix", "--staged", cwd=root)
    assert (root / "Home.md").read_text(encoding="utf-8") == before
    check = run_kbase("check", "--staged", cwd=root)
    assert check.returncode == 1
    lines = [ln for ln in check.stdout.splitlines() if "KB101" in ln]
    assert len(lines) == 2 and all("ambiguous" in ln and "`archive/one.md`, `archive/two.md`"
                                   in ln for ln in lines), check.stdout
