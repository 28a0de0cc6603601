"""Benchmark inputs: seeded generated vaults (cached under the out dir) and the shared
real corpora (absent on a fresh machine: callers skip with a note)."""

from __future__ import annotations

import shutil
import subprocess
import sys
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


def git_copy(src: Path, dest: Path) -> Path:
    """A corpus folder copied into a fresh one-commit git repository."""
    shutil.copytree(src, dest)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "corpus"]):
        subprocess.run([*GIT, *args], cwd=dest, check=True, capture_output=True)
    return dest


def kbase() -> list[str]:
    script = Path(sys.executable).parent / "kbase"
    return [str(script)] if script.exists() else [sys.executable, "-m", "kbase_ci"]
