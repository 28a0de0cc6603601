"""Issue 22, hangs: every scan over a line or a note is linear, through the parser and
the commands. Each case is a line of what made a scan quadratic (or crashed the parser),
timed at two sizes: twice the line must cost at most 2.5x the CPU
(tests/complexity.assert_linear; a quadratic scan costs 4x, and a run past the CPU
budget fails). The scans of our own modules, on their own, are unit tests
(tests/unit/parse/test_mention_scans.py, tests/unit/query/test_link_scans.py,
tests/unit/handover/test_placeholder_scans.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.parse.parser import parse_note
from tests.complexity import assert_linear
from tests.conftest import git, run_kbase, write

KB = 1_000
Repo = Callable[..., Path]


def line_of(piece: str, size: int) -> str:
    return piece * (size // len(piece))


@pytest.mark.parametrize("piece", ["![a](", "[a](", "![a](b) "])
def test_the_parser_is_linear_and_never_crashes(piece: str) -> None:
    """tree-sitter-markdown's inline grammar is quadratic in images per paragraph and
    segfaulted past ~380 KB of unclosed `[a](`; it is fed at most 16 KB at a time, so the
    512 KB line would crash it again and a whole-note feed would be quadratic."""
    assert_linear(lambda size: line_of(piece, size).encode(),
                  lambda text: len(parse_note("n.md", text).links), 256 * KB)


def _vault(make_repo: Repo, big: str) -> Path:
    root = make_repo({"A.md": "# A\n", "B.md": "# B\n\n[[A]]\n", ".gitignore": ".kbase/\n",
                      "Big.md": "# Big\n\n" + big + "\n"})
    return root


@pytest.mark.parametrize("command", [["links", "Big"], ["backlinks", "A"],
                                     ["explore", "Big"]])
def test_link_queries_on_a_line_of_20k_links(make_repo: Repo, command: list[str]) -> None:
    def indexed(sentences: int) -> Path:  # two links a sentence: 10k, then 20k links
        root = _vault(make_repo, " ".join(f"see [[A]] and [[B|b{i}]]."
                                          for i in range(sentences)))
        assert run_kbase("index", cwd=root).returncode == 0
        return root

    proc = assert_linear(indexed, lambda root: run_kbase(*command, cwd=root), 5_000,
                         rounds=2)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("piece", ["[[", "<"])
@pytest.mark.parametrize("command", [["gaps"], ["index"]])
def test_gaps_and_index_on_a_line_of_100k_openers(make_repo: Repo, piece: str,
                                                  command: list[str]) -> None:
    # Timed once each: a second `kbase index` reuses the first one's work.
    proc = assert_linear(lambda size: _vault(make_repo, line_of(piece, size)),
                         lambda root: run_kbase(*command, cwd=root), 100 * KB, rounds=1)
    assert proc.returncode in (0, 1), proc.stderr


def test_pr_concepts_against_a_vault_stay_linear(make_repo: Repo) -> None:
    """ci/conceptgaps: a PR whose notes name 6k concepts, against unchanged notes, was
    concepts x vault size (a substring search per concept per note) plus a scan of every
    mention per concept. Both grow here (3k concepts against 20 notes, then 6k against
    40): that product is what quadrupled."""
    def pr(concepts: int) -> tuple[Path, str]:
        root = make_repo({f"old/n{i}.md": "# Old\n\n" + "plain words here. " * 3000
                          for i in range(concepts // 150)})
        base = git(root, "rev-parse", "HEAD").strip()
        names = " ".join(f"Xa{i} Yb{i}." for i in range(concepts))
        write(root, {f"pr/p{j}.md": f"# P{j}\n\n{names}\n" for j in range(3)})
        git(root, "add", "-A")
        git(root, "commit", "-qm", "pr")
        return root, base

    def ci(repo: tuple[Path, str]) -> subprocess.CompletedProcess[str]:
        root, base = repo
        return run_kbase("ci", "--base", base, "--no-comment", "--fail-on", "none",
                         "--out", str(root.parent / f"report-{root.name}"), cwd=root)

    proc = assert_linear(pr, ci, 3000, rounds=1)
    assert proc.returncode == 0, proc.stderr
