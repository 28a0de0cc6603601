"""Issue 38, item 11: `kbase mv Old.md New.md` on a full disk exited 2 after git renamed
the file but could not write its index: `Old.md` gone, `New.md` untracked, neither rolled
back nor named. Now the file is put back and the error says nothing moved.

The disk is "full" for the command through RLIMIT_FSIZE (no root, no tmpfs): every
write past 100 bytes fails with a real OS error (EFBIG), in kbase and in git. git would
be killed by SIGXFSZ instead (Python's subprocess restores its default action), so a
`git` first on PATH ignores it and runs the real one: git then fails the way it does on
a full disk, after its rename, writing `index.lock`."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import GIT_ENV, REPO, git

LIMIT = 100


def _full_disk() -> None:  # in the child, before it runs kbase
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _mv_on_a_full_disk(root: Path, tmp_path: Path, *args: str
                       ) -> subprocess.CompletedProcess[str]:
    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "git").write_text(f"#!/bin/sh\ntrap '' XFSZ\nexec {real} \"$@\"\n")
    (bin_dir / "git").chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV,
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([sys.executable, "-m", "kbase_ci", "mv", *args], cwd=root,
                          env=env, capture_output=True, text=True, timeout=120,
                          check=False, preexec_fn=_full_disk)


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="needs RLIMIT_FSIZE")
@pytest.mark.parametrize("new", ["New.md", "sub/dir/New.md"])
def test_mv_on_a_full_disk_moves_nothing(make_repo: Callable[..., Path], tmp_path: Path,
                                         new: str) -> None:
    root = make_repo({"Old.md": "# Old\n", "B.md": "# B\n\n[[Old]]\n"})
    assert (root / ".git" / "index").stat().st_size > LIMIT  # so git cannot write it
    proc = _mv_on_a_full_disk(root, tmp_path, "Old.md", new)
    assert proc.returncode == 2, proc.stderr
    assert f"git mv Old.md {new} failed" in proc.stderr, proc.stderr
    assert "nothing was moved (Old.md was renamed back)" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert git(root, "status", "--porcelain") == ""  # as before: nothing to finish
    assert (root / "Old.md").read_text() == "# Old\n" and not (root / "sub").exists()
    assert (root / "B.md").read_text() == "# B\n\n[[Old]]\n"
