"""`kbase ci` on push to the default branch: check, build, publish to a real bare remote."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from tests.ci_support import commit_files, event_file, runner_env, step_outputs
from tests.conftest import git

NOTES = {
    "Home.md": "# Home\n\nSee [[Alpha]] and [[Beta#Usage]].\n",
    "Topics/Alpha.md": "# Alpha\n\nAlpha is about snake_case names.\n",
    "Topics/Beta.md": "# Beta\n\n## Usage\n\nUse beta with [[Alpha]].\n",
}


def _origin(tmp: Path) -> tuple[Path, Path]:
    """A bare remote with NOTES on main, and a clone of it."""
    bare = tmp / "origin.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    commit_files(seed, NOTES, "notes")
    git(seed, "push", "-q", str(bare), "main")
    return bare, _clone(bare, tmp / "clone")


def _clone(bare: Path, dest: Path) -> Path:
    git(bare.parent, "clone", "-q", str(bare), str(dest))
    git(dest, "config", "commit.gpgsign", "false")
    return dest


def _push_env(tmp: Path, clone: Path, name: str) -> dict[str, str]:
    where = tmp / name
    where.mkdir()
    head = git(clone, "rev-parse", "HEAD").strip()
    ev = event_file(where, "push", head=head, before="0" * 40)
    return runner_env(where, "push", ev, sha=head)


def _start(clone: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "kbase_ci", "ci"], cwd=clone, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out + err


def _remote_index(bare: Path) -> tuple[str, dict[str, object]]:
    """(source commit, manifest) of the remote index branch, every file verified."""
    tip = git(bare, "rev-parse", "refs/heads/kbase-index").strip()
    manifest = json.loads(git(bare, "show", f"{tip}:manifest.json"))
    for rel, digest in manifest["files"].items():
        data = subprocess.run(["git", "cat-file", "blob", f"{tip}:{rel}"], cwd=bare,
                              capture_output=True, check=True).stdout
        assert hashlib.sha256(data).hexdigest() == digest, rel
    return manifest["source"]["commit"], manifest


def test_push_publishes_then_updates_the_index_branch(tmp_path: Path) -> None:
    bare, clone = _origin(tmp_path)
    env = _push_env(tmp_path, clone, "run1")
    code, out = _finish(_start(clone, env))
    assert code == 0, out
    first = git(clone, "rev-parse", "HEAD").strip()
    source, manifest = _remote_index(bare)
    assert source == first and manifest["counts"]["notes"] == 3  # type: ignore[index]
    outputs = step_outputs(env)
    assert outputs["index-status"] == "created"
    assert outputs["index-commit"] == git(bare, "rev-parse", "kbase-index").strip()
    assert "Problems" not in Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")

    second = commit_files(clone, {"Journal/Gamma.md": "# Gamma\n\nGamma links [[Beta]].\n"},
                          "gamma")
    git(clone, "push", "-q", "origin", "main")
    fresh = _clone(bare, tmp_path / "fresh")  # a CI job starts from a new clone
    env2 = _push_env(tmp_path, fresh, "run2")
    code, out = _finish(_start(fresh, env2))
    assert code == 0, out
    source, manifest = _remote_index(bare)
    assert source == second and manifest["counts"]["notes"] == 4  # type: ignore[index]
    assert step_outputs(env2)["index-status"] == "committed"
    # Built from source (issue 28): nothing of the published index is reused.
    assert "index built from source (3 shard(s) built)" in out, out
    log = git(bare, "log", "--format=%H", "kbase-index").split()
    assert len(log) == 2


def test_two_concurrent_runs_leave_the_newer_index(tmp_path: Path) -> None:
    bare, old = _origin(tmp_path)
    new = _clone(bare, tmp_path / "clone-new")
    newer = commit_files(new, {"Gamma.md": "# Gamma\n\n[[Home]]\n"}, "gamma")
    git(new, "push", "-q", "origin", "main")
    # `old` still sits on the first commit, as a run started before the push would.
    older = git(old, "rev-parse", "HEAD").strip()
    assert older != newer
    procs = [_start(old, _push_env(tmp_path, old, "old")),
             _start(new, _push_env(tmp_path, new, "new"))]
    results = [_finish(p) for p in procs]
    for code, out in results:
        assert code == 0, out
    source, manifest = _remote_index(bare)
    assert source == newer and manifest["counts"]["notes"] == 4  # type: ignore[index]
