"""Scopes in a fresh `git clone --single-branch` of a remote the index (with its scopes)
was published to: `--scope`, `kbase mcp --scope` and `kbase scope build` find the
published index as plain queries do (kbase_ci/query/discovery.py): the bounded auto-fetch,
and FETCH_HEAD after `git fetch origin kbase-index`."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git
from scopekit import answer, kbase, scope_repo


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("scope-clone")
    repo = scope_repo(base / "vault", base / "model")
    kbase(repo, "scope", "build", "rust")
    remote = base / "origin.git"
    git(base, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    kbase(repo, "publish", "--push")
    assert "scopes/rust/manifest.json" in git(remote, "ls-tree", "-r", "--name-only",
                                              "kbase-index")
    return remote


def _clone(bare: Path, dest: Path) -> Path:
    git(dest.parent, "clone", "-q", "--single-branch", str(bare), str(dest))
    assert "kbase-index" not in git(dest, "branch", "-a")
    return dest


def test_scope_query_fetches_the_published_index(bare: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    clone = _clone(bare, tmp_path / "sb")
    monkeypatch.setenv("KBASE_OFFLINE", "1")  # offline: nothing here, nothing fetched
    _, out = kbase(clone, "search", "quokkaown", "--scope", "rust", ok=(2,))
    assert "no scope named rust has been built" in out
    monkeypatch.delenv("KBASE_OFFLINE")
    got = answer(clone, "search", "quokkaown", "--mode", "bm25", "--scope", "rust")
    assert [r["path"] for r in got["results"]] == ["rust/Ownership.md"]
    assert got["index"]["origin"] == "remote-branch"
    assert got["index"]["scope"] == {"name": "rust", "stale": False, "reason": None}


def test_scope_build_and_query_from_fetch_head(bare: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    clone = _clone(bare, tmp_path / "sb")
    git(clone, "fetch", "-q", "origin", "kbase-index")  # fills only FETCH_HEAD
    monkeypatch.setenv("KBASE_OFFLINE", "1")
    plain = answer(clone, "search", "quokkaown", "--mode", "bm25")
    assert plain["index"]["origin"] == "fetch-head"
    got = answer(clone, "search", "quokkaown", "--mode", "bm25", "--scope", "rust")
    assert got["index"]["origin"] == "fetch-head"
    assert [r["path"] for r in got["results"]] == ["rust/Ownership.md"]
    built = answer(clone, "scope", "build", "py", "--domain", "python")
    assert built["outcome"] == "built" and "/.git/kbase/index/" in built["folder"]
    got = answer(clone, "search", "okapiasyncio", "--mode", "bm25", "--scope", "py")
    assert [r["path"] for r in got["results"]] == ["python/Asyncio.md"]
    assert not (clone / ".kbase").exists()


def test_scope_build_with_nothing_published_names_the_fetch(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    repo = tmp_path / "plain"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "A.md").write_text("# A\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a")
    monkeypatch.setenv("KBASE_OFFLINE", "1")
    _, out = kbase(repo, "scope", "build", "x", "--domain", "y", ok=(2,))
    assert "git fetch origin +kbase-index:refs/remotes/origin/kbase-index" in out


def test_a_changed_declaration_makes_the_scope_stale(bare: Path, tmp_path: Path) -> None:
    clone = _clone(bare, tmp_path / "sb")
    got = answer(clone, "search", "quokkaown", "--mode", "bm25", "--scope", "rust")
    assert got["results"] and got["index"]["scope"]["stale"] is False
    config = clone / ".kbase.yml"
    text = config.read_text(encoding="utf-8")
    assert "  rust:\n    include: {domain: rust}\n" in text
    config.write_text(text.replace("  rust:\n    include: {domain: rust}\n",
                                   "  rust:\n    include: {domain: python}\n"),
                      encoding="utf-8")
    _, out = kbase(clone, "search", "quokkaown", "--scope", "rust", ok=(2,))
    assert "scope rust was built for another declaration (include domain: rust; " \
           ".kbase.yml now declares include domain: python); rebuild with " \
           "`kbase scope build rust`" in out
    st = answer(clone, "status", "--scope", "rust")["index"]["scope"]
    assert st["stale"] is True and "another declaration" in st["reason"]
    listed = {s["name"]: s for s in answer(clone, "scope", "list")["scopes"]}
    assert listed["rust"]["stale"] is True
    assert answer(clone, "scope", "build", "rust")["outcome"] == "built"
    got = answer(clone, "search", "okapiasyncio", "--mode", "bm25", "--scope", "rust")
    assert [r["path"] for r in got["results"]] == ["python/Asyncio.md"]
    assert got["index"]["scope"]["stale"] is False
    kbase(clone, "search", "quokkaown", "--mode", "bm25", "--scope", "rust", ok=(1,))
