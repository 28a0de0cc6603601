"""Issue 28: a FIFO where a tracked note was made `check --staged` and `fix --staged`
hang (opening a FIFO for reading blocks until a writer comes). Non-regular files are
never opened: each command finishes (a timeout fails the test instead of hanging)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, REPO, git


@pytest.mark.parametrize("args", [("check", "--staged"), ("fix", "--staged"), ("check",),
                                  ("check", "A.md"), ("index", "--offline"),
                                  ("search", "bee", "--offline"), ("read", "B")])
def test_a_fifo_in_the_vault_never_hangs(make_repo: Callable[..., Path],
                                         args: tuple[str, ...]) -> None:
    root = make_repo({"A.md": "# A\n\n[[B]]\n", "B.md": "# B\n\nbee\n"})
    (root / "A.md").write_text("# A\n\n[[B]] again\n", encoding="utf-8")
    git(root, "add", "A.md")
    (root / "A.md").unlink()
    os.mkfifo(root / "A.md")
    os.mkfifo(root / "C.md")  # untracked
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
    proc = subprocess.run([sys.executable, "-m", "kbase_ci", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr


def test_fix_skips_a_fifo_it_would_rewrite(make_repo: Callable[..., Path]) -> None:
    """`B.md` renamed: `kbase fix --staged` rewrites `[[B]]` in `A.md`, a FIFO in the
    work tree; opening it to read blocked for ever."""
    root = make_repo({"A.md": "# A\n\n[[B]]\n", "B.md": "# B\n"})
    git(root, "mv", "B.md", "C.md")
    (root / "A.md").unlink()
    os.mkfifo(root / "A.md")
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
    proc = subprocess.run([sys.executable, "-m", "kbase_ci", "fix", "--staged"], cwd=root,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr
    assert "A.md: not rewritten: not a regular file (a FIFO, socket or device)" in proc.stderr


def test_a_whole_vault_check_names_the_fifo_where_a_note_was(
        make_repo: Callable[..., Path]) -> None:
    """The vault skips a tracked note the work tree holds as a FIFO; `kbase check` says
    why it is missing (KB004, a warning) instead of only reporting the links to it."""
    root = make_repo({"A.md": "# A\n\n[[B]]\n", "B.md": "# B\n"})
    (root / "B.md").unlink()
    os.mkfifo(root / "B.md")
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
    run = [sys.executable, "-m", "kbase_ci", "check"]
    whole = subprocess.run(run, cwd=root, env=env, capture_output=True, text=True,
                           timeout=120, check=False)
    assert "B.md:1:1: KB004 (warning) tracked note is a FIFO" in whole.stdout
    assert "A.md:3:1: KB101" in whole.stdout
    named = subprocess.run([*run, "A.md"], cwd=root, env=env, capture_output=True,
                           text=True, timeout=120, check=False)
    assert "KB004" not in named.stdout  # only a whole-vault check speaks for other paths
