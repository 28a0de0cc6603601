"""Helpers for the query tests: a repository whose index branch was published by the real
`kbase index && kbase publish`, and a fresh `git clone` of it (which has the branch only
as `origin/kbase-index`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from conftest import git, run_kbase, write


def published_demo(base: Path, *index_args: str) -> Path:
    """A clone of a repository of the demo vault whose index was published (built with
    `index_args`)."""
    import shutil

    from conftest import FIXTURES

    src = base / "src"
    shutil.copytree(FIXTURES / "demo-vault", src)
    git(src, "init", "-q", "-b", "main")
    git(src, "add", "-A")
    git(src, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "demo")
    publish_index(src, *index_args)
    return clone(src, base / "clone")


def published_corpus(base: Path, name: str) -> Path:
    """A clone of a repository of the shared corpus `name` whose index was published
    (skipped when ../shared is absent)."""
    from conftest import corpus_repo

    src = corpus_repo(name, base / "src")
    publish_index(src)
    return clone(src, base / "clone")


def indexed_repo(root: Path, files: dict[str, str | bytes]) -> Path:
    """A git repository at `root` holding `files`, committed and indexed (`.kbase/`)."""
    git(root, "init", "-q", "-b", "main")
    write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "notes")
    proc = run_kbase("index", cwd=root)
    assert proc.returncode == 0, proc.stderr
    return root


def publish_index(repo: Path, *index_args: str) -> None:
    gi = repo / ".gitignore"
    if ".kbase/" not in (gi.read_text() if gi.exists() else ""):
        with gi.open("a") as fh:
            fh.write("\n.kbase/\n")
        git(repo, "add", ".gitignore")
        git(repo, "commit", "-q", "-m", "ignore index")
    for cmd in (("index", *index_args), ("publish",)):
        proc = run_kbase(*cmd, cwd=repo)
        assert proc.returncode == 0, proc.stderr


def clone(repo: Path, dest: Path) -> Path:
    git(dest.parent, "clone", "-q", str(repo), str(dest))
    git(dest, "config", "user.name", "Test")
    git(dest, "config", "user.email", "test@example.com")
    return dest


def query(clone_dir: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """Run a query command with JSON output: (exit code, answer or {}, stderr)."""
    proc: subprocess.CompletedProcess[str] = run_kbase(*args, cwd=clone_dir)
    data = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, data, proc.stderr


def paths(items: list[dict[str, Any]]) -> list[str | None]:
    return [i["path"] for i in items]
