"""`--max-tokens` in every output form: text, Mermaid, DOT and `graph explore --stream`
keep to the budget (or refuse it, exit 2) as JSON does; never a flag silently ignored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, git, run_kbase
from graphkit import check_dot, check_mermaid

from kbase_ci.query.payload import cost

VAULT = FIXTURES / "graph" / "vault"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("budget") / "vault"
    shutil.copytree(VAULT, dest)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "graph fixture")
    return dest


@pytest.mark.parametrize("args", [
    ("graph", "hubs", "--min-links", "1", "--limit", "0"), ("notes",),
    ("graph", "explore", "Espresso"), ("graph", "clusters", "--min-size", "2"),
    ("backlinks", "Espresso"), ("tags",)])
def test_text_keeps_to_the_budget(repo: Path, args: tuple[str, ...]) -> None:
    whole = run_kbase(*args, "--format", "text", cwd=repo)
    assert whole.returncode == 0, whole.stderr
    budget = cost(whole.stdout) // 2
    assert budget >= 60, "the fixture answer is too small to test a cut"
    proc = run_kbase(*args, "--format", "text", "--max-tokens", str(budget), cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert cost(proc.stdout) <= budget and proc.stdout != whole.stdout
    last = proc.stdout.splitlines()[-1]
    assert last.startswith(f"(truncated to --max-tokens {budget}: ") and "cut" in last
    # what stays begins the whole answer's lines: the least relevant items went
    kept = proc.stdout.splitlines()[:-1]
    assert kept and all(any(w.startswith(line) for w in whole.stdout.splitlines())
                        for line in kept)
    roomy = run_kbase(*args, "--format", "text", "--max-tokens", "100000", cwd=repo)
    assert roomy.stdout == whole.stdout


def test_text_budget_too_small_is_a_usage_error(repo: Path) -> None:
    proc = run_kbase("graph", "hubs", "--format", "text", "--max-tokens", "5", cwd=repo)
    assert proc.returncode == 2 and "raise it" in proc.stderr


@pytest.mark.parametrize("fmt", ["mermaid", "dot"])
@pytest.mark.parametrize("args", [("graph", "hubs", "--min-links", "1", "--limit", "0"),
                                  ("graph", "explore", "Espresso")])
def test_pictures_keep_to_the_budget(repo: Path, fmt: str, args: tuple[str, ...]) -> None:
    whole = run_kbase(*args, "--format", fmt, cwd=repo).stdout
    budget = cost(whole) // 2
    proc = run_kbase(*args, "--format", fmt, "--max-tokens", str(budget), cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert cost(proc.stdout) <= budget
    lines = proc.stdout.splitlines()
    comment = "%% " if fmt == "mermaid" else "// "
    assert lines[-1].startswith(f"{comment}(truncated to --max-tokens {budget}: ")
    declared, _ = (check_mermaid if fmt == "mermaid" else check_dot)("\n".join(lines[:-1]))
    assert declared  # still a well-formed picture, with fewer notes


def test_stream_stops_at_the_budget(repo: Path) -> None:
    whole = run_kbase("graph", "explore", "Espresso", "--stream", cwd=repo).stdout
    budget = cost(whole) // 2
    proc = run_kbase("graph", "explore", "Espresso", "--stream", "--max-tokens",
                     str(budget), cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert cost(proc.stdout) <= budget
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events[-1]["type"] in ("truncated", "result")
    if events[-1]["type"] == "truncated":
        assert events[-1]["max_tokens"] == budget
        assert events[-1]["nodes"] == len(events) - 1 >= 1
    else:  # the result trimmed to what the notes left
        assert events[-1]["truncated"]["max_tokens"] <= budget
    assert proc.stdout.splitlines()[:-1] == whole.splitlines()[:len(events) - 1]
    roomy = run_kbase("graph", "explore", "Espresso", "--stream", "--max-tokens", "100000",
                      cwd=repo)
    assert roomy.stdout == whole
    tiny = run_kbase("graph", "explore", "Espresso", "--stream", "--max-tokens", "20",
                     cwd=repo)
    assert tiny.returncode == 2 and "raise it" in tiny.stderr
