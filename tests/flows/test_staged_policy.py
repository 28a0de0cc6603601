"""The hook judges the tree it is asked about with that tree's policy (issue 38, item 4):
`kbase check --staged` reads the `.kbase.yml` staged in git's index, never the work
tree's. pre-commit stashes unstaged edits and so hid the difference; a plain
`.git/hooks/pre-commit`, lefthook, husky and agents run with the work tree as it is.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import GIT_ENV, REPO, git, run_kbase, write

LINKS_OFF = "checks:\n  severity:\n    links: off\n"
BASE = {"Old.md": "# Old\n\nText.\n", "B.md": "# B\n\nSee [[Old]].\n"}

MakeRepo = Callable[..., Path]


def _plain_hook(root: Path) -> None:
    """A `.git/hooks/pre-commit` that runs the check as any hook manager would."""
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m kbase_ci "
                    "check --staged\n", encoding="utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)


def _commit(root: Path) -> tuple[int, str]:
    env = {**os.environ, **GIT_ENV, "HOME": str(root)}
    proc = subprocess.run(["git", "commit", "-q", "-m", "change"], cwd=root, env=env,
                          capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def test_an_unstaged_config_does_not_switch_checks_off(make_repo: MakeRepo) -> None:
    root = make_repo(BASE)
    write(root, {".kbase.yml": LINKS_OFF})  # untracked, never staged
    git(root, "rm", "-q", "Old.md")
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 1, proc.stderr
    assert "B.md:3:5: KB101 [[Old]]: `Old.md` was deleted in this commit" in proc.stdout
    _plain_hook(root)
    code, out = _commit(root)
    assert code != 0 and "KB101" in out
    assert "Old.md" in git(root, "ls-tree", "--name-only", "HEAD")


def test_an_unstaged_edit_of_a_committed_config_is_not_used(make_repo: MakeRepo) -> None:
    root = make_repo({**BASE, ".kbase.yml": "vault:\n  folders: [.]\n"})
    write(root, {".kbase.yml": LINKS_OFF})  # modified, not staged
    git(root, "rm", "-q", "Old.md")
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 1 and "KB101" in proc.stdout


def test_a_staged_invalid_config_is_reported_when_the_work_tree_is_valid(
        make_repo: MakeRepo) -> None:
    root = make_repo(BASE)
    write(root, {".kbase.yml": "vault:\n  folderz: [notes]\n"})
    git(root, "add", ".kbase.yml")
    write(root, {".kbase.yml": "vault:\n  folders: [.]\n"})  # fixed, but not staged
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 2
    assert ".kbase.yml:2:3: KB900 unknown key `vault.folderz`" in proc.stderr
    _plain_hook(root)
    code, out = _commit(root)
    assert code != 0 and "KB900" in out


def test_the_staged_config_is_applied_though_the_work_tree_lost_it(make_repo: MakeRepo) -> None:
    # The other way round: the policy staged applies, whatever the work tree holds.
    root = make_repo({**BASE, "Draft.md": "# Draft\n\n[[Nowhere]]\n"})
    write(root, {".kbase.yml": "vault:\n  exclude: ['Draft.md']\n"})
    git(root, "add", ".kbase.yml")
    write(root, {".kbase.yml": "vault:\n  folders: [.]\n"})
    proc = run_kbase("check", "--staged", "--all-findings", "--all", cwd=root)
    assert proc.returncode == 0, proc.stdout
    (root / ".kbase.yml").unlink()
    proc = run_kbase("check", "--staged", "--all-findings", "--all", cwd=root)
    assert proc.returncode == 0, proc.stdout


def test_a_config_deleted_from_the_index_means_defaults(make_repo: MakeRepo) -> None:
    root = make_repo({**BASE, ".kbase.yml": LINKS_OFF})
    git(root, "rm", "-q", "--cached", ".kbase.yml")  # the file stays in the work tree
    git(root, "rm", "-q", "Old.md")
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 1 and "KB101" in proc.stdout
