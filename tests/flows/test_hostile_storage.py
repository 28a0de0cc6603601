"""Issue 28: a read-only clone without `.git/kbase` and a full disk. `status`, `search`
and `check` exited 3 (an OSError traceback; on a full disk `git status` could not write
`index.lock` and every command failed). They now answer without writing (in-memory
caches); a command that must write (`kbase index`) exits 2 naming the cause."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, REPO, git, write

NOTES = {"A.md": "# A\n\n[[B]] and a word\n", "B.md": "# B\n\nbee\n"}


def _kbase(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV, "TMPDIR": str(root.parent)}
    return subprocess.run([sys.executable, "-m", "kbase_ci", *args],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def _answers(root: Path) -> None:
    status = _kbase(root, "status")
    assert status.returncode == 0, status.stderr
    search = _kbase(root, "search", "bee")
    assert search.returncode == 0, search.stderr
    assert json.loads(search.stdout)["results"][0]["path"] == "B.md"
    check = _kbase(root, "check")
    assert check.returncode == 0, check.stderr
    assert "Traceback" not in status.stderr + search.stderr + check.stderr


def test_a_file_where_the_state_folder_should_be(make_repo: Callable[..., Path]) -> None:
    root = make_repo(NOTES)
    shutil.rmtree(root / ".git" / "kbase", ignore_errors=True)
    (root / ".git" / "kbase").write_text("not a folder\n", encoding="utf-8")
    _answers(root)
    said = _kbase(root, "check").stderr
    assert said.count("kbase: note: caches are not kept in") == 1, said


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A repository on a 2 MB tmpfs filled to the last byte (root only: skipped else)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)],
                      capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root)")
    try:
        root = mnt / "repo"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        write(root, NOTES)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "init")
        fd = os.open(mnt / "fill", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(fd)
        yield root
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_disk(full_disk: Path) -> None:
    _answers(full_disk)
    build = _kbase(full_disk, "index", "--offline")
    assert build.returncode == 2, build.stderr
    assert "No space left on device" in build.stderr and "Traceback" not in build.stderr
    listed = git(full_disk, "status", "--porcelain", "--untracked-files=all", check=False)
    assert ".kbase" not in listed  # no temp folder git could see
