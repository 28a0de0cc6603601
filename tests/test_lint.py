"""House rules enforced by the suite: ruff and mypy clean, no pickle, light imports."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import REPO


def _tool(name: str) -> list[str]:
    # Both are test dependencies (pyproject `test` extra); run them as modules of this
    # interpreter so the suite uses the versions it installed.
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not installed")
    return [sys.executable, "-m", name]


def test_ruff_clean() -> None:
    proc = subprocess.run([*_tool("ruff"), "check", "kbase_ci", "tests", "bench"], cwd=REPO,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_clean() -> None:
    proc = subprocess.run([*_tool("mypy")], cwd=REPO, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_pickle_anywhere() -> None:
    for path in [*REPO.glob("kbase_ci/**/*.py"), *REPO.glob("bench/**/*.py")]:
        text = path.read_text(encoding="utf-8")
        # Spelled in pieces so this test is not itself a hit for the same search.
        assert "pickle" + ".load" not in text and "import " + "pickle" not in text, path


def test_check_path_imports_no_heavy_dependencies() -> None:
    # `kbase check` runs on every commit: numpy, usearch, model2vec, bm25s must stay lazy.
    code = ("import sys, kbase_ci.cli as c, kbase_ci.checker, kbase_ci.checks;"
            "c.build_parser('check');"
            "heavy = [m for m in ('numpy', 'usearch', 'model2vec', 'bm25s', 'Stemmer', "
            "'tree_sitter', 'rich') if m in sys.modules];"
            "print(','.join(heavy))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, check=True)
    assert proc.stdout.strip() == "", f"heavy modules on the check path: {proc.stdout}"
