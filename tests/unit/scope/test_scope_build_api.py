"""kbase_ci.scope.scopebuild and .source on a small vault with a BM25-only main index: a plan
writes nothing, a build holds only the selected notes, an unchanged scope is not built
again, a changed one is, and every way of asking for a scope that cannot be is a usage
error that says why. (`kbase scope ...` end to end, with vectors and the fixture vault:
tests/flows/test_scope_*.py.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.errors import UsageError
from kbase_ci.index.reader import open_index
from kbase_ci.index.scopes import selectors_of
from kbase_ci.scope.scopebuild import build_scope
from kbase_ci.scope.source import open_index_source
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.scopeconfig import ScopeSpec
from tests.conftest import run_kbase

Repo = Callable[..., Path]
NOTES: dict[str, str | bytes] = {
    "rust/Ownership.md": "# Ownership\n\n#rust Moves, see [[Borrowing]] and [[GIL]].\n",
    "rust/Borrowing.md": "# Borrowing\n\n#rust References, see [[Ownership]].\n",
    "python/GIL.md": "# GIL\n\n#python One thread at a time.\n",
    ".gitignore": ".kbase/\n",
}
RUST = ScopeSpec.from_pairs([("path", "rust/**")], [])


@pytest.fixture
def root(make_repo: Repo) -> Path:
    root = make_repo(NOTES)
    proc = run_kbase("index", cwd=root)
    assert proc.returncode == 0, proc.stderr
    return root


def _paths(folder: Path) -> list[str]:
    return sorted(row.path for row in open_index(folder).notes())


def test_a_plan_counts_and_writes_nothing(root: Path) -> None:
    plan = build_scope(root, "rust", RUST, plan=True)
    assert (plan.outcome, plan.ok) == ("planned", True)
    assert plan.selection.paths == ("rust/Borrowing.md", "rust/Ownership.md")
    details = {c.component: c.details for c in plan.components}
    assert details["notes"] == {"notes": 2}
    assert details["links"] == {"links": 3, "out_of_scope": 1}  # Ownership -> GIL leaves
    assert details["vectors"] == {"vectors": 0}  # the main index has none
    assert not (root / ".kbase" / "scopes").exists()


def test_a_build_holds_the_selected_notes_and_is_kept_until_it_changes(root: Path) -> None:
    built = build_scope(root, "rust", RUST)
    assert (built.outcome, built.ok) == ("built", True)
    assert _paths(built.folder) == ["rust/Borrowing.md", "rust/Ownership.md"]
    scope = open_index(built.folder).manifest.scope
    assert scope is not None and scope.selectors == selectors_of(RUST)
    assert build_scope(root, "rust", RUST).outcome == "up-to-date"
    python = ScopeSpec.from_pairs([("tag", "python")], [])
    again = build_scope(root, "rust", python)  # same name, other notes: built again
    assert again.outcome == "built" and _paths(again.folder) == ["python/GIL.md"]
    source = open_index_source(Vault(root), None, "rust")
    assert source.scope == {"name": "rust", "stale": False, "reason": None}
    assert source.location.endswith(".kbase scope rust") and source.member is not None
    assert _paths(source.reader.root) == ["python/GIL.md"]


def test_a_scope_that_selects_nothing_says_which_selector_and_what_exists(root: Path) -> None:
    with pytest.raises(UsageError, match=r"scope none selects no note: include `tag: pyhton` "
                                         r"matched nothing: did you mean `tag: python`\?"):
        build_scope(root, "none", ScopeSpec.from_pairs([("tag", "pyhton")], []))
    assert not (root / ".kbase" / "scopes" / "none").exists()


def test_no_main_index_no_scope(make_repo: Repo) -> None:
    bare = make_repo(NOTES)
    with pytest.raises(UsageError, match="a scope is cut from the main index, so build "
                                         "that first with `kbase index`"):
        build_scope(bare, "rust", RUST)


@pytest.mark.parametrize(("name", "words"), [
    ("no such", "scope name 'no such' is not valid"),
    ("../up", "scope name '../up' is not valid"),
    ("never", "no scope named never has been built"),
])
def test_asking_for_a_scope_that_is_not_there(root: Path, name: str, words: str) -> None:
    with pytest.raises(UsageError, match=words.replace("(", r"\(")):
        open_index_source(Vault(root), None, name)
