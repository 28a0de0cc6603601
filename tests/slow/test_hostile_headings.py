"""Issue 28: a 2 MB note of nothing but headings never finished `kbase index` (quadratic
in the headings of one note); it now builds within a CPU cap, one chunk per heading."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.complexity import within_cpu
from tests.conftest import run_kbase


def test_a_2_mb_note_of_headings_is_indexed(make_repo: Callable[..., Path]) -> None:
    text = "\n".join(f"{'#' * (1 + i % 6)} Heading {i} w{i % 97}" for i in range(90000))
    assert len(text) > 2_000_000
    root = make_repo({"Big.md": text + "\n", ".gitignore": ".kbase/\n"})
    proc = within_cpu(400, run_kbase, "index", "--offline", "--jobs", "1", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert "1 notes, 90000 chunks" in proc.stdout
    assert json.loads((root / ".kbase" / "manifest.json").read_text(encoding="utf-8"))
