"""Issue 38 item 1: a note whose frontmatter holds `tags:` then `  - - - ... - x` (1,000
dashes, 2 KB) made `kbase check --staged`, `kbase ci --mode report`, `kbase index`,
`search` and `read` exit 3 (RecursionError); 100,000 dashes crashed the process inside
ruamel. The note's frontmatter is refused with a located KB304 and everything else of it
is read as usual."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.ci_support import run_ci
from tests.conftest import GIT_ENV, REPO, git, kbase_process, run_kbase, write

DEEP = "---\ntags:\n  " + "- " * 1000 + "x\n---\n# Deep\n\nsee [[Home]] and [[Gone]]\n"
HOME = "# Home\n\nback to [[Deep]]\n"


def _env() -> dict[str, str]:
    import os

    return {**{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")},
            **GIT_ENV, "PYTHONPATH": str(REPO), "GITHUB_EVENT_NAME": ""}


def test_the_hook_reports_a_located_finding(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"Home.md": HOME})
    write(root, {"Deep.md": DEEP})
    git(root, "add", "Deep.md")
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 1, proc.stderr
    assert "Deep.md:3:1: KB304 frontmatter nested too deeply" in proc.stdout
    assert "Deep.md:7:18: KB101 [[Gone]]" in proc.stdout  # the body is read
    assert "Traceback" not in proc.stderr


def test_a_crash_of_the_yaml_reader_is_refused_before_it_runs(
        make_repo: Callable[..., Path]) -> None:
    # 100,000 levels (200 KB) segfaulted ruamel's C composer: a real process, to see it.
    root = make_repo({"Home.md": HOME})
    write(root, {"Deep.md": "---\ntags:\n  " + "- " * 100_000 + "x\n---\n[[Home]]\n"})
    git(root, "add", "Deep.md")
    proc = kbase_process("check", "--staged", cwd=root)
    assert proc.returncode == 1, proc.stderr
    assert "Deep.md:3:1: KB304" in proc.stdout


def test_ci_index_and_queries_read_the_rest_of_the_vault(make_repo: Callable[..., Path],
                                                         tmp_path: Path) -> None:
    root = make_repo({"Home.md": HOME, ".gitignore": ".kbase/\n"})
    base = git(root, "rev-parse", "HEAD").strip()
    write(root, {"Deep.md": DEEP})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "deep")

    out = tmp_path / "report"
    proc = run_ci(root, _env(), "--mode", "report", "--base", base, "--no-comment",
                  "--out", str(out))
    assert proc.returncode == 1, proc.stderr
    codes = {f["code"] for f in json.loads((out / "report.json").read_text("utf-8"))[
        "findings"]}
    assert {"KB304", "KB101"} <= codes

    assert run_kbase("index", "--offline", cwd=root).returncode == 0
    # A fresh edit of the note too: the queries parse changed notes themselves.
    write(root, {"Deep.md": DEEP + "\nmore words about compost\n"})
    for args in (["search", "compost", "--mode", "bm25"], ["read", "Deep"],
                 ["backlinks", "Home"]):
        proc = run_kbase(*args, "--offline", cwd=root)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("frontmatter", [
    "tags:\n  " + "- " * 1000 + "x",
    "? " * 3000 + "x",
    "".join(" " * i + f"k{i}:\n" for i in range(1400)) + " " * 1400 + "end",
    "a0: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 400)),
])
def test_every_form_of_deep_frontmatter_is_a_finding(make_repo: Callable[..., Path],
                                                     frontmatter: str) -> None:
    root = make_repo({"Home.md": HOME})
    write(root, {"Deep.md": f"---\n{frontmatter}\n---\n[[Home]]\n"})
    git(root, "add", "Deep.md")
    proc = run_kbase("check", "--staged", "--format", "json", cwd=root)
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)["findings"]
    assert [f["code"] for f in found] == ["KB304"]
