"""Benchmark inputs: seeded generated vaults (cached under the out dir) and the shared
real corpora (absent on a fresh machine: callers skip with a note)."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CORPORA = SHARED / "corpora"
QA = CORPORA / "qa"
MODEL = SHARED / "models" / "minilm-static-256"
SEED = 42
# The shared benchmark vault of the project (same generator, seed 42): reused when it is
# there so the suite does not spend 12 s regenerating it.
PROJECT_GEN10K = Path("/tmp/kbase-bench/gen10k")
WIKILINKED = ("data-engineering-wiki", "obsidian-tasks-docs", "dnd-5e-srd")
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@kbase.invalid",
       "-c", "commit.gpgsign=false", "-c", "gc.auto=0", "-c", "init.defaultBranch=main"]


@dataclass(frozen=True, slots=True)
class Generated:
    path: Path
    notes: int
    seed: int
    broken_links: int | None
    """Deliberately broken links when this run generated the vault (else None)."""


def model() -> Path | None:
    return MODEL if MODEL.is_dir() else None


def shared_present() -> bool:
    return CORPORA.is_dir()


def corpus_vault(name: str) -> Path | None:
    path = CORPORA / name / "vault"
    return path if path.is_dir() else None


def generated(out: Path, notes: int, seed: int = SEED) -> Generated:
    """A generated vault keyed by seed and size: made once, reused by later runs."""
    if notes == 10000 and seed == 42 and (PROJECT_GEN10K / ".git").is_dir():
        return Generated(PROJECT_GEN10K, notes, seed, None)
    path = out / "vaults" / f"gen-{notes}-seed{seed}"
    if not (path / ".git").is_dir():
        from bench.generate import generate_vault

        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        stats = generate_vault(path, notes, seed)
        (path.parent / f"gen-{notes}-seed{seed}.broken").write_text(
            str(stats.broken_links), encoding="utf-8")
    marker = path.parent / f"gen-{notes}-seed{seed}.broken"
    broken = int(marker.read_text(encoding="utf-8")) if marker.is_file() else None
    return Generated(path, notes, seed, broken)


def clone(src: Path, dest: Path) -> Path:
    """A scratch clone: benchmarks never change their input vault."""
    subprocess.run([*GIT, "clone", "-q", "--local", str(src), str(dest)], check=True,
                   capture_output=True)
    return dest


def commit_all(repo: Path, env: dict[str, str] | None = None, *, gitignore: bool = False,
               message: str = "corpus") -> Path:
    """`repo` (a folder of notes) made a one-commit git repository on `main`;
    `gitignore`: with `.kbase/` ignored, as a vault that keeps its index out of git."""
    if gitignore:
        (repo / ".gitignore").write_text(".kbase/\n", encoding="utf-8")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", message]):
        subprocess.run([*GIT, *args], cwd=repo, env=env, check=True, capture_output=True)
    return repo


def git_copy(src: Path, dest: Path, *, gitignore: bool = False, message: str = "corpus"
             ) -> Path:
    """A corpus folder (its notes, not its `.git` or `.kbase`) copied into a fresh
    one-commit git repository (`commit_all`)."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".git", ".kbase"))
    return commit_all(dest, gitignore=gitignore, message=message)


def published_clone(vault: Path, base: Path, index_args: Sequence[str],
                    env: dict[str, str] | None = None, *, only: str = "",
                    single_branch: bool = True, message: str = "corpus") -> Path:
    """`base/clone`: the notes of `vault` (`only`: that folder of it) committed in
    `base/src`, pushed to a local bare remote, indexed (`kbase index INDEX_ARGS`) and
    published with `kbase publish --push`, then cloned (`single_branch`: `--single-branch`,
    so the index is only in FETCH_HEAD after `git fetch origin kbase-index`), as an agent
    meets a vault. `env`: of every git and kbase process (default: this checkout's code)."""
    env = env or {**os.environ, "PYTHONPATH": str(ROOT)}
    src, remote, dest = base / "src", base / "remote.git", base / "clone"
    shutil.rmtree(base, ignore_errors=True)
    shutil.copytree(vault / only, src / only)
    commit_all(src, env, gitignore=True, message=message)

    def git(*args: str, cwd: Path | None = src) -> None:
        subprocess.run([*GIT, *args], cwd=cwd, env=env, check=True, capture_output=True)
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=None)
    git("remote", "add", "origin", str(remote))
    git("push", "-q", "origin", "main")
    for args in (["index", *index_args], ["publish", "--push"]):
        proc = subprocess.run([sys.executable, "-m", "kbase_ci", *args], cwd=src, env=env,
                              text=True, capture_output=True)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{vault}: kbase {' '.join(args)} exited {proc.returncode}:\n"
                             f"{proc.stderr}")
    git("clone", "-q", *(["--single-branch"] if single_branch else []), str(remote),
        str(dest), cwd=None)
    git("fetch", "-q", "origin", "kbase-index", cwd=dest)
    return dest


class Worktree:
    """A detached worktree of `ref` in a temp folder, removed on exit."""

    def __init__(self, ref: str) -> None:
        self.ref = ref
        self.base = Path(tempfile.mkdtemp(prefix="kbase-bench-tree-"))
        self.path = self.base / "tree"

    def __enter__(self) -> Path:
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(self.path), self.ref],
                       cwd=ROOT, check=True)
        return self.path

    def __exit__(self, *exc: object) -> None:
        subprocess.run(["git", "worktree", "remove", "--force", str(self.path)], cwd=ROOT,
                       check=False)
        shutil.rmtree(self.base, ignore_errors=True)


def compile_tree(tree: Path) -> None:
    """`tree`'s modules compiled to bytecode up front, as an installed package has them:
    with PYTHONDONTWRITEBYTECODE set every run would compile every module again."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "kbase_ci")],
                   check=True, capture_output=True)


def spread(values: Sequence[float]) -> str:
    """`median (min-max)` of a series of ratios."""
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def kbase() -> list[str]:
    script = Path(sys.executable).parent / "kbase"
    return [str(script)] if script.exists() else [sys.executable, "-m", "kbase_ci"]
