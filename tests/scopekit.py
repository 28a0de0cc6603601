"""Helpers for the scope tests: the fixture vault (fixtures/scope) as a git repository
with a real main index, and what each scope must and must not show."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from conftest import FIXTURES, git, run_kbase
from indexkit import make_tiny_model

SCOPE_FIXTURE = FIXTURES / "scope"

MARKERS = {
    "rust/Ownership.md": "quokkaown", "rust/Borrowing.md": "wombatborrow",
    "rust/async/Tokio.md": "platypustokio", "python/Python GIL.md": "narwhalgil",
    "python/Asyncio.md": "okapiasyncio", "lucene/Lucene Segments.md": "axolotlsegment",
    "lucene/Inverted Index.md": "capybaraindex",
    "lucene/drafts/Scoring Draft.md": "pangolinscore", "Home.md": "lemurhome",
}
RUST = {"rust/Ownership.md", "rust/Borrowing.md", "rust/async/Tokio.md"}
SCOPES = {
    "rust": RUST,  # one domain
    "rust-tags": RUST,  # a tag subtree
    "search": {"lucene/Lucene Segments.md", "lucene/Inverted Index.md"},  # glob - tag
    "mixed": {"python/Python GIL.md", "lucene/Inverted Index.md"},  # tag + name - type
}


def scope_repo(dest: Path, model_dir: Path) -> Path:
    """The fixture vault committed in `dest`, with its main index built (tiny model)."""
    shutil.copytree(SCOPE_FIXTURE / "vault", dest)
    shutil.copy(SCOPE_FIXTURE / "kbase.yml", dest / ".kbase.yml")
    (dest / ".gitignore").write_text(".kbase/\n", encoding="utf-8")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "vault")
    if not (model_dir / "model.safetensors").is_file():
        make_tiny_model(model_dir)
    kbase(dest, "index", "--model", str(model_dir))
    return dest


def kbase(cwd: Path, *args: str, ok: tuple[int, ...] = (0,)) -> tuple[int, str]:
    """Run kbase; return (exit code, stdout + stderr), asserting the exit code."""
    proc = run_kbase(*args, cwd=cwd)
    assert proc.returncode in ok, (args, proc.returncode, proc.stdout, proc.stderr)
    return proc.returncode, proc.stdout + proc.stderr


def answer(cwd: Path, *args: str, ok: tuple[int, ...] = (0,)) -> dict[str, Any]:
    proc = run_kbase(*args, "--format", "json", cwd=cwd)
    assert proc.returncode in ok, (args, proc.returncode, proc.stdout, proc.stderr)
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def title(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def forbidden(repo: Path, inside: set[str]) -> list[str]:
    """What must never appear in an answer on the scope: the outside notes' paths and
    unique words, and their titles unless an inside note's own text names them."""
    texts = "\n".join((repo / p).read_text(encoding="utf-8") for p in inside)
    out: list[str] = []
    for path, marker in MARKERS.items():
        if path in inside:
            continue
        out += [path, marker]
        if title(path) not in texts:
            out.append(title(path))
    return out
