"""Issue 22, hangs: every scan over a line or a note is linear. Each case is a 1 MB line
of what made a scan quadratic (or crashed the parser), run under a CPU cap
(tests/complexity.within_cpu): 2 s for our own scans; the commands, which also list,
parse and index the vault, get more. A quadratic scan of 1 MB takes minutes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.handover.placeholders import read_body
from kbase_ci.parse.mentions import extract, heading_keys
from kbase_ci.parse.parser import parse_note
from kbase_ci.query.links import Sentences
from tests.complexity import within_cpu
from tests.conftest import git, run_kbase, write

MB = 1_000_000
Repo = Callable[..., Path]


def line_of(piece: str, size: int = MB) -> str:
    return piece * (size // len(piece))


@pytest.mark.parametrize("piece", ["[[", "<", "[a](", "][", "[", "Aa-", "Aa'", "1aB",
                                   "The Aa Bb. ", "Using Aa Bb\n", "[[a]] ", "http://"])
def test_concept_mentions_are_linear(piece: str) -> None:
    """parse/mentions (kbase gaps, ci, index): `[[`, `<`: 106 s for 50k before."""
    within_cpu(2, lambda: len(extract(line_of(piece))))


def test_fenced_notes_and_long_headings_are_linear() -> None:
    within_cpu(2, lambda: len(extract(line_of("```\nx\n```\n"))))
    within_cpu(2, lambda: len(heading_keys("# a" + " " * MB + "b\n")))


def test_sentences_of_a_line_with_many_links_are_linear() -> None:
    """query/links: the line was cut again for each of its links (33 s to > 120 s)."""
    line = line_of("see [[A]]. ")

    def every_link() -> int:
        cut = Sentences(line)
        return sum(len(cut.at(col)) for col in range(5, len(line), 11))
    within_cpu(2, every_link)


@pytest.mark.parametrize("piece", ["<!--", "%%", " . ", "<!--%%"])
def test_handover_placeholders_are_linear(piece: str) -> None:
    lines = ["## Next steps", line_of(piece)]
    within_cpu(2, lambda: len(read_body(lines, 2, 2, "Next steps").lines))


@pytest.mark.parametrize("piece", ["![a](", "[a](", "![a](b) "])
def test_the_parser_is_linear_and_never_crashes(piece: str) -> None:
    """tree-sitter-markdown's inline grammar is quadratic in images per paragraph and
    segfaulted past ~380 KB of unclosed `[a](`; it is fed at most 16 KB at a time. Its
    own speed on link-dense text is ~2 us a byte, so the cap is 6 s here."""
    within_cpu(6, lambda: len(parse_note("n.md", line_of(piece).encode()).links))


def _vault(make_repo: Repo, big: str) -> Path:
    root = make_repo({"A.md": "# A\n", "B.md": "# B\n\n[[A]]\n", ".gitignore": ".kbase/\n",
                      "Big.md": "# Big\n\n" + big + "\n"})
    return root


@pytest.mark.parametrize("command", [["links", "Big"], ["backlinks", "A"],
                                     ["explore", "Big"]])
def test_link_queries_on_a_line_of_20k_links(make_repo: Repo, command: list[str]) -> None:
    root = _vault(make_repo, " ".join(f"see [[A]] and [[B|b{i}]]." for i in range(10_000)))
    assert run_kbase("index", cwd=root).returncode == 0
    proc = within_cpu(10, run_kbase, *command, cwd=root)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("piece", ["[[", "<"])
@pytest.mark.parametrize("command", [["gaps"], ["index"]])
def test_gaps_and_index_on_a_line_of_100k_openers(make_repo: Repo, piece: str,
                                                  command: list[str]) -> None:
    root = _vault(make_repo, line_of(piece, 200_000))
    proc = within_cpu(15, run_kbase, *command, cwd=root)
    assert proc.returncode in (0, 1), proc.stderr


def test_pr_concepts_against_a_vault_stay_linear(make_repo: Repo) -> None:
    """ci/conceptgaps: a PR whose notes name 6k concepts, against unchanged notes, was
    concepts x vault size (a substring search per concept per note) plus a scan of every
    mention per concept."""
    root = make_repo({f"old/n{i}.md": "# Old\n\n" + "plain words here. " * 3000
                      for i in range(40)})
    base = git(root, "rev-parse", "HEAD").strip()
    names = " ".join(f"Xa{i} Yb{i}." for i in range(6000))
    write(root, {f"pr/p{j}.md": f"# P{j}\n\n{names}\n" for j in range(3)})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pr")
    proc = within_cpu(20, run_kbase, "ci", "--base", base, "--no-comment", "--fail-on",
                      "none", "--out", str(root.parent / "report"), cwd=root)
    assert proc.returncode == 0, proc.stderr
