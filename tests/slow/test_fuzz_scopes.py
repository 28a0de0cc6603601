"""The forged-index property (tests/slow/test_fuzz.py) over what it did not reach (issue
28): the scoped indexes under `scopes/` (any file's bytes, its scope manifest's hash
recomputed; any key of a scope manifest replaced or removed) and a model's tokenizer
files (any bytes of `tokenizer.json` and of the other JSON files beside it). A query
answers, or refuses the scope or model with exit 2 or a notice; never an internal
error, never a crash."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from contextlib import suppress
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kbase_ci.errors import KbaseError
from kbase_ci.index.modelfolder import open_embedder
from tests.conftest import indexed_repo, run_kbase
from tests.indexkit import make_tiny_model
from tests.slow.test_fuzz import forge_key, fuzz

CHUNKS = st.binary(min_size=1, max_size=8) | st.sampled_from(
    [b"9999999", b"-1", b"[[[[", b'"x"', b"null", b"\xff\xfe", b"1e309", b"{}"])


@pytest.fixture(scope="module")
def scoped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = indexed_repo(tmp_path_factory.mktemp("fuzzscope") / "repo", {
        "a/A.md": "# A\n\ngarden [[B]] #t\n", "a/C.md": "# C\n\n## x\n\n[[a/A]]\n",
        "B.md": "# B\n\n[[a/A]] soil\n",
        ".kbase.yml": "scopes:\n  s:\n    include: {path: \"a/**\"}\n"}, "--offline")
    assert (root / ".kbase" / "scopes" / "s" / "manifest.json").is_file()
    return root


def _query(root: Path, copy: Path, what: object) -> None:
    for args in (["search", "garden"], ["backlinks", "A"], ["status"]):
        proc = run_kbase(*args, "--scope", "s", "--index", str(copy), cwd=root)
        assert proc.returncode in (0, 1, 2), (what, args, proc.stderr)
        assert "internal error" not in proc.stderr, (what, args, proc.stderr)


@fuzz(80)
@given(data=st.data())
def test_forged_scope_files_never_crash_a_query(scoped: Path, data: st.DataObject) -> None:
    scope = scoped / ".kbase" / "scopes" / "s"
    names = sorted(p.relative_to(scope).as_posix() for p in scope.rglob("*")
                   if p.is_file() and p.name != "manifest.json")
    rel = data.draw(st.sampled_from(names))
    original = (scope / rel).read_bytes()
    pos = data.draw(st.integers(0, max(len(original) - 1, 0)))
    chunk = data.draw(CHUNKS)
    forged = original[:pos] + chunk + original[pos + len(chunk):]
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "idx"
        shutil.copytree(scoped / ".kbase", copy)
        (copy / "scopes" / "s" / rel).write_bytes(forged)
        manifest = json.loads((copy / "scopes" / "s" / "manifest.json").read_bytes())
        manifest["files"][rel] = hashlib.sha256(forged).hexdigest()
        (copy / "scopes" / "s" / "manifest.json").write_text(json.dumps(manifest))
        _query(scoped, copy, rel)


@fuzz(80)
@given(data=st.data())
def test_forged_scope_manifests_never_crash_a_query(scoped: Path,
                                                    data: st.DataObject) -> None:
    manifest = json.loads((scoped / ".kbase" / "scopes" / "s" / "manifest.json").read_bytes())
    path, value = forge_key(manifest, data)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "idx"
        shutil.copytree(scoped / ".kbase", copy)
        (copy / "scopes" / "s" / "manifest.json").write_text(json.dumps(manifest))
        _query(scoped, copy, (path, value))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_model(tmp_path_factory.mktemp("tinytok") / "tiny")


@fuzz(80)
@given(data=st.data())
def test_forged_tokenizer_files_are_refused_or_run(tiny: Path, data: st.DataObject) -> None:
    names = sorted(p.name for p in tiny.iterdir() if p.suffix in (".json", ".txt"))
    name = data.draw(st.sampled_from(names))
    original = (tiny / name).read_bytes()
    pos = data.draw(st.integers(0, max(len(original) - 1, 0)))
    chunk = data.draw(CHUNKS)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "m"
        shutil.copytree(tiny, folder)
        (folder / name).write_bytes(original[:pos] + chunk + original[pos + len(chunk):])
        with suppress(KbaseError):
            model = open_embedder(folder)
            out = model.encode(["garden soil", "", "é \x00 日本"])
            assert out.shape == (3, model.dim)
