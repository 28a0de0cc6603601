"""Scopes on the index branch: `kbase ci` on push builds the declared scopes into the
branch, and a fresh clone queries them with --scope (materialised from the branch)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.ci_support import commit_files, event_file, runner_env
from tests.conftest import FIXTURES, git, run_kbase


def _vault_files() -> dict[str, str]:
    src = FIXTURES / "scope" / "vault"
    files = {p.relative_to(src).as_posix(): p.read_text(encoding="utf-8")
             for p in sorted(src.rglob("*.md"))}
    files[".kbase.yml"] = (FIXTURES / "scope" / "kbase.yml").read_text(encoding="utf-8")
    files[".gitignore"] = ".kbase/\n"
    return files


def _run_ci(tmp: Path, clone: Path) -> None:
    head = git(clone, "rev-parse", "HEAD").strip()
    where = tmp / f"run-{head[:8]}"
    where.mkdir()
    env = runner_env(where, "push", event_file(where, "push", head=head, before="0" * 40),
                     sha=head)
    proc = subprocess.run([sys.executable, "-m", "kbase_ci", "ci"], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _query(cwd: Path, *args: str) -> tuple[int, dict[str, object], str]:
    proc = run_kbase(*args, "--format", "json", cwd=cwd)
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else {}, \
        proc.stderr


def test_ci_publishes_declared_scopes_and_a_clone_queries_them(tmp_path: Path) -> None:
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    commit_files(seed, _vault_files(), "vault")
    git(seed, "push", "-q", str(bare), "main")
    runner = tmp_path / "runner"
    git(tmp_path, "clone", "-q", str(bare), str(runner))
    _run_ci(tmp_path, runner)

    listing = git(bare, "ls-tree", "-r", "--name-only", "kbase-index").split()
    for name in ("rust", "rust-tags", "search", "mixed"):
        assert f"scopes/{name}/manifest.json" in listing
    assert not any(".lock" in p for p in listing)

    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(bare), str(fresh))
    code, got, err = _query(fresh, "search", "tasks futures", "--mode", "bm25",
                            "--scope", "rust")
    assert code == 0, err
    assert {r["path"] for r in got["results"]} <= {  # type: ignore[attr-defined]
        "rust/Ownership.md", "rust/Borrowing.md", "rust/async/Tokio.md"}
    assert got["index"]["origin"] == "remote-branch"  # type: ignore[index]
    assert got["index"]["scope"]["name"] == "rust"  # type: ignore[index]
    code, got, _ = _query(fresh, "search", "okapiasyncio", "--mode", "bm25", "--scope",
                          "rust")
    assert code == 1 and got["results"] == []
    code, got, _ = _query(fresh, "search", "okapiasyncio", "--mode", "bm25")
    assert code == 0 and got["results"]

    # A tampered scope on the branch is refused, not answered from.
    folder = next((fresh / ".git" / "kbase" / "index").iterdir())
    victim = folder / "scopes" / "rust" / "notes.json"
    victim.write_bytes(victim.read_bytes().replace(b"Ownership", b"Ownershop"))
    code, _, err = _query(fresh, "search", "tasks", "--scope", "rust")
    assert code == 2 and "does not match the manifest" in err
    shutil.rmtree(folder)
