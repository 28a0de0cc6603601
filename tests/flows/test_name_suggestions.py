"""Query commands' "no note named X": a slip of a name, then notes whose names share the
words (BM25 over titles, aliases and headings), not whatever looks alike (issue 29).

Scenario vault: fixtures/hooks/name-search (`Hash Function`, `Type Casting`, `CPU Cache`,
`C`, `File Sharing`, `Page Table`, and `Memory` with the heading `Swapping pages to
disk` and the alias `Virtual Memory`).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kbase_ci.query.namesearch import Named, NameIndex
from tests.conftest import FIXTURES, git, run_kbase

VAULT = FIXTURES / "hooks" / "name-search" / "vault"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("names") / "vault"
    shutil.copytree(VAULT, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "init")
    return root


@pytest.mark.parametrize("typed, meant", [
    ("Hashing", "Hash Function"),  # character similarity said `Type Casting`
    ("Caching", "CPU Cache"),  # ... and `C`
    ("Paging", "Page Table, Memory"),  # ... and `File Sharing`; Memory by its heading
    ("Swapping", "Memory"),
    ("Hash Functon", "Hash Function"),  # a slip still comes first
    ("Virtual Memroy", "Memory"),  # a slip of an alias names its note
])
def test_backlinks_of_an_unknown_name_suggest_what_it_means(repo: Path, typed: str,
                                                            meant: str) -> None:
    proc = run_kbase("backlinks", typed, cwd=repo)
    assert proc.returncode == 2
    assert f"no note named {typed}; did you mean {meant}?" in proc.stderr


def test_a_name_with_nothing_alike_gets_no_suggestion() -> None:
    index = NameIndex([Named("Hash Function"), Named("Page Table")])
    assert index.suggest("zzzz") == []
    assert index.suggest("Functions of hashes") == ["Hash Function"]


def test_a_name_like_nothing_gets_no_loose_suggestion(repo: Path) -> None:
    # WRatio rates `Nope` 77 against `Syntactic Scope` (a part of `Scope`): below the floor
    index = NameIndex([Named("Syntactic Scope"), Named("Lexical Scope"), Named("Closures")])
    assert index.suggest("Nope") == []
    proc = run_kbase("backlinks", "Nope", cwd=repo)
    assert proc.returncode == 2 and proc.stderr.strip().endswith("no note named Nope")
