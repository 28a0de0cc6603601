"""No query command floods an agent that did not ask for a budget: without
`--max-tokens` the answer stays within `.kbase.yml`'s `query.max_tokens` (default
8000, as MCP's tools), `--max-tokens 0` prints it whole, and a bad budget is a usage
or config error (exit 2) naming its place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kbase_ci.query.payload import cost
from tests.conftest import run_kbase
from tests.querykit import indexed_repo

# 300 notes whose `notes` answer is ~13k tokens of JSON: over the default budget.
NOTES = {f"folder-{i % 7}/a-rather-long-note-title-number-{i:04d}-about-things.md":
         f"# Note {i}\n\nText {i}.\n" for i in range(300)}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_repo(tmp_path_factory.mktemp("budget"), NOTES)


def _notes(root: Path, *args: str) -> tuple[int, str, dict[str, object]]:
    proc = run_kbase("notes", "--format", "json", *args, cwd=root)
    return proc.returncode, proc.stdout, json.loads(proc.stdout)


def test_the_default_budget_trims_and_says_so(vault: Path) -> None:
    code, out, ans = _notes(vault)
    assert code == 0 and cost(out) <= 8000
    truncated = ans["truncated"]
    assert isinstance(truncated, dict) and truncated["max_tokens"] == 8000
    code, whole, full = _notes(vault, "--max-tokens", "0")
    assert code == 0 and cost(whole) > 8000 and "truncated" not in full
    assert len(full["notes"]) == 300 > len(ans["notes"]) > 0  # type: ignore[arg-type]


def test_the_config_sets_the_default(vault: Path, tmp_path: Path) -> None:
    config = vault / ".kbase.yml"
    try:
        config.write_text("query:\n  max_tokens: 600\n", encoding="utf-8")
        code, out, _ = _notes(vault)
        assert code == 0 and cost(out) <= 600
        code, out, ans = _notes(vault, "--max-tokens", "3000")  # the flag wins
        assert code == 0 and 600 < cost(out) <= 3000
        config.write_text("query:\n  max_tokens: 0\n", encoding="utf-8")
        code, out, ans = _notes(vault)
        assert code == 0 and "truncated" not in ans and cost(out) > 8000
        config.write_text("query:\n  max_tokens: -5\n", encoding="utf-8")
        proc = run_kbase("notes", "--format", "json", cwd=vault)
        assert proc.returncode == 2
        assert ".kbase.yml:2:15: KB900 `query.max_tokens` must be a whole number" in proc.stderr
    finally:
        config.unlink()


def test_a_negative_flag_is_a_usage_error(vault: Path) -> None:
    proc = run_kbase("notes", "--max-tokens", "-1", "--format", "json", cwd=vault)
    assert proc.returncode == 2 and "must be 0 (no limit) or more" in proc.stderr
