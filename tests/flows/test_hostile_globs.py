"""Issue 28: path globs from a PR's `.kbase.yml` (`vault.exclude`, per-path settings) and
from a handover note hung `kbase check`, `kbase handover check` and `kbase ci` on a deep
path with a long name (Python's `re` backtracks polynomially; RE2 is linear). Each
command runs in a child with a CPU cap: a hang fails at the cap instead of stalling."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from tests.ci_support import run_ci
from tests.complexity import within_cpu
from tests.conftest import GIT_ENV, REPO, git, run_kbase, write
from tests.flows.test_handover import handover

STARS = "a*a*a*a*a*a*a*b"
DEEP = "/".join(["aaaa"] * 40) + "/" + "a" * 200 + ".md"
CONFIG = (f"vault:\n  exclude: ['**/{STARS}', 'x/**/**/**/**/**/**/**/b', 'aaaa/**']\n"
          f"frontmatter:\n  required:\n    '**/a*a*a*a*a*a*a*c': [title]\n")


def _repo(make_repo: Callable[..., Path]) -> tuple[Path, str]:
    root = make_repo({".kbase.yml": CONFIG, "Home.md": "# Home\n\n[[Missing]]\n"})
    base = git(root, "rev-parse", "HEAD").strip()
    write(root, {DEEP: "# Deep\n\n[[Nowhere]]\n",  # excluded: not reported
                 "handovers/2025-03-20-track-3.md": handover([f"**/{STARS}", DEEP])})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "deep")
    return root, base


def test_check_and_handover_check_finish_on_a_deep_path(
        make_repo: Callable[..., Path]) -> None:
    root, base = _repo(make_repo)
    check = within_cpu(60, run_kbase, "check", "--format", "json", cwd=root)
    assert check.returncode == 1, check.stderr  # Home.md's [[Missing]]
    found = json.loads(check.stdout)["findings"]
    paths = {f["path"] for f in found}
    assert "Home.md" in paths and DEEP not in paths
    rel = "handovers/2025-03-20-track-3.md"
    ho = within_cpu(60, run_kbase, "handover", "check", "--base", base, "--format", "json",
                    cwd=root)
    assert ho.returncode in (0, 1) and json.loads(ho.stdout), ho.stderr
    staged = within_cpu(60, run_kbase, "check", "--staged", rel, cwd=root)
    assert staged.returncode in (0, 1), staged.stderr


def test_kbase_ci_finishes_on_a_deep_path(make_repo: Callable[..., Path],
                                          tmp_path: Path) -> None:
    root, base = _repo(make_repo)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")},
           **GIT_ENV, "PYTHONPATH": str(REPO)}
    out = tmp_path / "report"
    proc = run_ci(root, env, "--base", base, "--no-comment", "--out", str(out), timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["findings"] is not None
