"""`kbase scope build`: selection, components, out-of-scope links, donated vectors,
`--plan` writing nothing, the lock, config errors, `kbase scope list`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import GIT_ENV, REPO, git, write
from indexkit import snapshot
from scopekit import RUST, SCOPES, answer, kbase, scope_repo

from kbase_ci.errors import ConfigError, UsageError
from kbase_ci.index.reader import open_index
from kbase_ci.vault.config import parse_config
from kbase_ci.vault.scopeconfig import ScopeSpec, split_values


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("scope-build")
    return scope_repo(base / "vault", base / "model")


@pytest.mark.parametrize("name", sorted(SCOPES))
def test_build_selects_exactly_the_scope(repo: Path, name: str) -> None:
    got = answer(repo, "scope", "build", name)
    assert got["outcome"] in ("built", "up-to-date")
    assert set(got["notes"]) == SCOPES[name]
    assert [c["component"] for c in got["components"]] == [
        "notes", "links", "bm25", "vectors", "similar"]
    assert all(c["status"] == "ok" for c in got["components"]), got["components"]
    scoped = open_index(repo / ".kbase" / "scopes" / name)
    assert set(scoped.core().paths) == SCOPES[name]
    block = scoped.manifest.scope
    main = open_index(repo / ".kbase")
    assert block is not None and block.name == name
    assert block.main_index.source_commit == main.manifest.source.commit
    assert scoped.manifest.source == main.manifest.source
    assert scoped.manifest.embeddings == main.manifest.embeddings


def test_links_leaving_the_scope_name_nothing(repo: Path) -> None:
    answer(repo, "scope", "build", "rust")
    links = open_index(repo / ".kbase" / "scopes" / "rust").links()
    away = [r for r in links.rows if r.status == "out_of_scope"]
    # Ownership -> Python GIL, Lucene Segments#Merging; Tokio -> Asyncio
    assert sorted(r.raw for r in away) == [
        "[[Asyncio]]", "[[Lucene Segments#Merging]]", "[[Python GIL]]"]
    assert all(r.target is None and r.anchor_found is None for r in away)
    assert links.unresolved == {}  # out of scope is not "not yet written"
    inside = [r for r in links.rows if r.status == "ok"]
    assert inside and all(isinstance(r.target, int) for r in inside)


def test_vectors_are_the_main_index_vectors(repo: Path) -> None:
    """Donated, not re-embedded: each scope chunk's vector equals the main index's."""
    import numpy as np

    answer(repo, "scope", "build", "rust")
    main = open_index(repo / ".kbase")
    scoped = open_index(repo / ".kbase" / "scopes" / "rust")
    # Three notes: seven paragraph and heading chunks, five of them with words the tiny
    # model knows (a vector).
    assert scoped.manifest.counts.vectors == 5

    def by_note(reader: object) -> dict[str, list[bytes]]:
        out: dict[str, list[bytes]] = {}
        for shard in reader.shards:  # type: ignore[attr-defined]
            index = reader.vectors(shard)  # type: ignore[attr-defined]
            for i, note in enumerate(reader.chunk_notes(shard)):  # type: ignore[attr-defined]
                vec = index.get(np.uint64(i), dtype="f16")
                out.setdefault(note, []).append(b"" if vec is None else vec.tobytes())
        return out

    mine, theirs = by_note(scoped), by_note(main)
    assert set(mine) == RUST
    for note, vecs in mine.items():
        assert vecs == theirs[note] and any(vecs)


def test_plan_writes_nothing_and_names_empty_selectors(repo: Path) -> None:
    before = snapshot(repo)
    got = answer(repo, "scope", "build", "adhoc", "--plan", "--tag", "rust/*,nothing/here",
                 "--path", "zz/**", "--exclude", "type:nope")
    assert snapshot(repo) == before
    assert got["plan"] and set(got["notes"]) == RUST
    counts = {c["component"]: c["details"] for c in got["components"]}
    assert counts["notes"]["notes"] == 3 and counts["links"]["out_of_scope"] == 3
    # A plan counts the chunks the build would embed: seven (five get a vector).
    assert counts["bm25"]["chunks"] == 7 and counts["vectors"]["vectors"] == 7
    unmatched = {u["selector"]: u["hint"] for u in got["unmatched"]}
    assert set(unmatched) == {"tag: nothing/here", "path: zz/**", "type: nope"}
    assert "rust/memory" in unmatched["tag: nothing/here"]
    assert "concept" in unmatched["type: nope"]
    kbase(repo, "scope", "build", "none", "--plan", "--tag", "nothing", ok=(1,))
    assert snapshot(repo) == before
    _, out = kbase(repo, "scope", "build", "none", "--tag", "nothing", ok=(2,))
    assert "selects no note" in out and "known tag values" in out
    assert snapshot(repo) == before


def test_two_concurrent_builds_equal_one(repo: Path, tmp_path: Path) -> None:
    scopes = repo / ".kbase" / "scopes"
    shutil.rmtree(scopes / "mixed", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
    cmd = [sys.executable, "-m", "kbase_ci", "scope", "build", "mixed"]
    procs = [subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    outcomes = sorted(json.loads(o)["outcome"] for o, _ in outs)
    assert outcomes in (["built", "up-to-date"], ["built", "built"])
    raced = snapshot(scopes / "mixed")
    shutil.rmtree(scopes / "mixed")
    answer(repo, "scope", "build", "mixed")
    assert snapshot(scopes / "mixed") == raced
    leftovers = [p.name for p in scopes.iterdir() if ".tmp-" in p.name or ".old-" in p.name]
    assert leftovers == []


def test_main_index_still_opens_and_rebuild_keeps_scopes(repo: Path) -> None:
    answer(repo, "scope", "build", "search")
    open_index(repo / ".kbase")  # scopes/ is not "a file the manifest does not list"
    _, out = kbase(repo, "index", "--no-scopes")  # no --model: another main index
    assert (repo / ".kbase" / "scopes" / "search" / "manifest.json").is_file()
    assert "kbase index: scope search: stale (built from the previous index)" in out
    listed = {s["name"]: s for s in answer(repo, "scope", "list")["scopes"]}
    assert listed["search"]["stale"] is True and listed["search"]["declared"] is True
    got = answer(repo, "scope", "build", "search")
    assert got["outcome"] == "built"
    assert got["components"][3]["status"] == "skipped"  # that main index has no vectors
    listed = {s["name"]: s for s in answer(repo, "scope", "list")["scopes"]}
    assert listed["search"]["stale"] is False


def test_selector_normalisation_is_deterministic() -> None:
    a = parse_config("scopes:\n  s:\n    include:\n      tag: |\n        #rust/* , lang,\n"
                     "        rust/*\n")
    b = parse_config("scopes:\n  s:\n    include: ['tag: lang', 'tag: rust/*']\n")
    assert a.scopes.named == b.scopes.named
    assert a.scopes.named["s"] == ScopeSpec((("tag", "lang"), ("tag", "rust/*")), ())
    assert split_values(["a, b", "c\nd", " "]) == ["a", "b", "c", "d"]
    # Declaring scopes does not change the main index's config digest.
    assert a.digest == parse_config("").digest


@pytest.mark.parametrize(("text", "where", "words"), [
    ("scopes: [a]\n", (1, 9), "mapping of scope names"),
    ("scopes:\n  s:\n    include: {colour: red}\n", (3, 15), "unknown selector kind"),
    ("scopes:\n  s:\n    include: ['tag rust']\n", (3, 15), "KIND: VALUE"),
    ("scopes:\n  s:\n    exclude: {tag: x}\n", (3, 5), "give it an `include`"),
    ("scopes:\n  s:\n    includes: {tag: x}\n", (3, 5), "unknown key `scopes.s.includes`"),
    ("scopes:\n  'a b':\n    include: {tag: x}\n", (2, 3), "scope names"),
    ("scopes:\n  s:\n    include: {tag: [[x]]}\n", (3, 20), "string or a list"),
])
def test_config_errors_are_located(text: str, where: tuple[int, int], words: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(text)
    assert (err.value.line, err.value.col) == where
    assert words in str(err.value)


def test_config_error_exits_2_on_the_command_line(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "# A\n", ".kbase.yml": "scopes:\n  s:\n    include: 3\n"})
    _, out = kbase(root, "scope", "build", "s", ok=(2,))
    assert ".kbase.yml:3:14: KB900" in out


def test_unknown_scope_and_bad_names(repo: Path) -> None:
    _, out = kbase(repo, "scope", "build", "nope", ok=(2,))
    assert "no scope named nope in .kbase.yml" in out and "mixed, rust" in out
    _, out = kbase(repo, "scope", "build", "../x", "--tag", "a", ok=(2,))
    assert "not valid" in out
    _, out = kbase(repo, "search", "x", "--scope", "nope", ok=(2,))
    assert "no scope named nope has been built" in out
    with pytest.raises(UsageError):
        from kbase_ci.vault.scopeconfig import check_name

        check_name("a/b")


def test_no_main_index_is_a_clear_error(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "# A\n#t\n"})
    write(root, {".gitignore": ".kbase/\n"})
    _, out = kbase(root, "scope", "build", "s", "--tag", "t", ok=(2,))
    assert "kbase index" in out


def test_index_rebuilds_declared_scopes_and_names_stale_ones(repo: Path) -> None:
    """A local `kbase index` leaves no scope stale without saying so: declared scopes are
    rebuilt, an ad-hoc one built before is reported with how to rebuild it."""
    answer(repo, "scope", "build", "rust")
    answer(repo, "scope", "build", "adhoc", "--domain", "python")
    home = repo / "Home.md"
    write(repo, {"Home.md": home.read_text(encoding="utf-8") + "\nEdited once more.\n"})
    git(repo, "commit", "-qam", "edit")
    _, out = kbase(repo, "index")  # another main index
    assert "kbase index: scope rust: built, 3 notes" in out
    assert "kbase index: scope adhoc: stale (ad hoc, built from the previous index)" in out
    listed = {s["name"]: s for s in answer(repo, "scope", "list")["scopes"]}
    assert listed["rust"]["stale"] is False and listed["mixed"]["stale"] is False
    assert listed["adhoc"]["stale"] is True
    code, got, = kbase(repo, "search", "quokkaown", "--mode", "bm25", "--scope", "rust")[:2]
    assert code == 0 and "rust/Ownership.md" in got


def test_scope_builds_from_the_published_index_in_a_fresh_clone(repo: Path,
                                                                 tmp_path: Path) -> None:
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "main")
    kbase(repo, "publish", "--push")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    git(clone, "fetch", "-q", "origin", "kbase-index")
    assert not (clone / ".kbase").exists()
    got = answer(clone, "scope", "build", "py", "--domain", "python")  # not published
    assert got["outcome"] == "built"
    assert set(got["notes"]) == {"python/Python GIL.md", "python/Asyncio.md"}
    assert "/.git/kbase/index/" in got["folder"]  # beside the published index it was cut from
    assert not (clone / ".kbase").exists()
    code, out = kbase(clone, "search", "okapiasyncio", "--mode", "bm25", "--scope", "py")
    assert code == 0 and "python/Asyncio.md" in out and '"remote-branch"' in out
    built = {s["name"] for s in answer(clone, "scope", "list")["scopes"] if s["built"]}
    assert "py" in built and "rust" in built  # rust came with the published index
