""""Did you mean": only confident, only what resolves when pasted, applied only on request.

Real git repositories, the real `kbase check` and `kbase fix` (in-process `cli.main`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.checks.suggestions import closest, suggestion_key
from tests.conftest import git, run_kbase

Repo = Callable[..., Path]

NOTES: dict[str, str | bytes] = {
    "Guide.md": "# Guide\n\n## Step 1: Install\n\n## `run()` helper\n\n"
                "## See [[Other#Part]]\n\n## What is it?\n\nA paragraph ^blk1\n",
    "Other.md": "# Other\n\n## Part\n",
    "Kubernetes.md": "---\naliases: [Container Orchestrator]\n---\n# K\n",
    "a/Log.md": "# a\n", "b/Log.md": "# b\n",
    "Apache Spark.md": "# Spark\n",
    "a/Notebook.md": "# Notebook in a\n",
    "data/Recipes.md": "# Recipes in data\n",
}


def _check(root: Path, text: str) -> dict[str, str | None]:
    """The findings `kbase check` reports for `text` written in Home.md: raw link -> the
    suggestion in its message (None: a finding without one)."""
    (root / "Home.md").write_text(text, encoding="utf-8")
    git(root, "add", "Home.md")
    proc = run_kbase("check", "--all", "--format", "json", cwd=root)
    import json

    out: dict[str, str | None] = {}
    for f in json.loads(proc.stdout)["findings"]:
        if f["path"] == "Home.md" and f["code"] in ("KB101", "KB102", "KB111", "KB112"):
            raw = f["message"].split(": ", 1)[0]
            out[raw] = f["suggestion"]
            if f["suggestion"]:
                assert f["message"].endswith(f"; did you mean {f['suggestion']}?")
    return out


@pytest.fixture
def vault(make_repo: Repo) -> Path:
    return make_repo(NOTES)


@pytest.mark.parametrize(("link", "suggestion"), [
    # A stray full stop, a slip, a slip in a long name.
    ("[[Guide.]]", "[[Guide]]"),
    ("[[Giude]]", "[[Guide]]"),
    ("[[Apache Sprak]]", "[[Apache Spark]]"),
    # The folder the link named is kept, and only notes in it qualify.
    ("[[a/Notebok]]", "[[a/Notebook]]"),
    ("[[b/Notebok]]", None),
    ("[[a/Recipe]]", None),
    # Never an alias, never a name two notes share, never a guess at an unwritten note.
    ("[[Container Orchestrater]]", None),
    ("[[Lgo]]", None),
    ("[[Apache Kafka]]", None),
    # A mistyped URL is not a misspelled note.
    ("[x](www.example.com)", None),
    ("[x](htps//example.com/Guide)", None),
    # Markdown links keep their style.
    ("[g](Giude.md)", "[g](Guide.md)"),
])
def test_note_suggestions(vault: Path, link: str, suggestion: str | None) -> None:
    assert _check(vault, f"see {link} here\n") == {link: suggestion}


@pytest.mark.parametrize(("link", "suggestion"), [
    # Headings in the form Obsidian writes into a link: pasting it resolves.
    ("[[Guide#Step 1 Instal]]", "[[Guide#Step 1 Install]]"),
    ("[[Guide#run helpr]]", "[[Guide#run() helper]]"),
    ("[[Guide#See Other Prt]]", "[[Guide#See Other Part]]"),
    ("[[Guide#Wat is it]]", "[[Guide#What is it?]]"),
    ("[g](Guide.md#Step%201%20Instal)", "[g](Guide.md#Step%201%20Install)"),
    ("[g](Guide.md#step-1-instal)", "[g](Guide.md#step-1-install)"),
    ("[[Guide#^blk2]]", "[[Guide#^blk1]]"),
    ("[[Guide#Uninstall everything]]", None),
])
def test_anchor_suggestions(vault: Path, link: str, suggestion: str | None) -> None:
    assert _check(vault, f"see {link} here\n") == {link: suggestion}


def test_no_finding_for_a_match_after_normalisation(vault: Path) -> None:
    text = "[[Guide#What is it]] [[Guide#run() helper]] [[Guide#Step 1 Install]] [[guide.md]]\n"
    assert _check(vault, text) == {}


def test_fix_applies_suggestions_only_when_asked(vault: Path) -> None:
    text = "see [[Giude]], [[Guide#Step 1 Instal]] and [[Apache Kafka]]\n"
    _check(vault, text)
    git(vault, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qm", "home")
    assert run_kbase("fix", cwd=vault).returncode == 0
    assert (vault / "Home.md").read_text(encoding="utf-8") == text
    dry = run_kbase("fix", "--suggestions", "--dry-run", cwd=vault)
    assert dry.returncode == 1
    assert (vault / "Home.md").read_text(encoding="utf-8") == text
    proc = run_kbase("fix", "--suggestions", cwd=vault)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "Home.md:1:5: [[Giude]] -> [[Guide]]",
        "Home.md:1:16: [[Guide#Step 1 Instal]] -> [[Guide#Step 1 Install]]",
    ]
    assert (vault / "Home.md").read_text(encoding="utf-8") == (
        "see [[Guide]], [[Guide#Step 1 Install]] and [[Apache Kafka]]\n")
    # What is left is the one link no note answers.
    assert _check(vault, (vault / "Home.md").read_text(encoding="utf-8")) == {
        "[[Apache Kafka]]": None}


def test_closest_needs_a_clear_winner() -> None:
    keys = [suggestion_key(k) for k in ["Data Warehouse", "Data Lake", "Gear", "Lvchange"]]
    assert closest(suggestion_key("data-warehouse"), keys) == 0
    assert closest(suggestion_key("Data Warehous"), keys) == 0
    assert closest(suggestion_key("Fear"), keys) is None  # the first letter differs
    assert closest(suggestion_key("pvchange"), keys) is None
    assert closest("dat", keys) is None  # too short to tell
    assert closest(suggestion_key("Data Lakes"), [*keys, "data lanes"]) is None  # a tie


def test_suggestions_look_only_at_names_a_finding_can_reach(make_repo: Repo) -> None:
    """Issue 40: every broken `[[folder/name]]` normalised the folder of every path of
    the vault (a cold `check --all` spent 6% in 500k `suggestion_key` calls for 521
    errors): quadratic in the vault. The names are indexed once (by folder, extension
    and length), so twice the notes and links cost about twice the CPU."""
    from tests.complexity import assert_linear

    def repo(n: int) -> Path:
        notes: dict[str, str | bytes] = {f"f{i // 10}/Note {i}.md": "# N\n" for i in range(n)}
        notes["Home.md"] = "".join(f"[[f{i // 10}/Noet {i}]]\n" for i in range(n))
        return make_repo(notes)

    proc = assert_linear(repo, lambda root: run_kbase("check", "--all", cwd=root), 1500,
                         rounds=1, budget=300)
    assert proc.stdout.count("KB101") == 3000
    assert "Home.md:1:1: KB101 [[f0/Noet 0]]: no note named `f0/Noet 0`; did you mean " \
           "[[f0/Note 0]]?" in proc.stdout
