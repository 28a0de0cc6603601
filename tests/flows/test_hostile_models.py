"""Issue 28, who picks the model: the index branch names its model (id, kind, hash), and
anyone who can push to the branch writes that name. A query loads only a model the user
chose (`--model`, `KBASE_MODEL_PATH`, `embeddings.model` of the checked-out
`.kbase.yml`) and uses the manifest only to check it is the same; it never downloads or
loads the model a manifest names. `kbase status` says whether the index's model is here
and why. A model whose files make its library fail (a tokenizer that panics) is refused
with a notice and the answer ranked by BM25, never exit 3. The hub is a real HTTP server
on 127.0.0.1 (tests/fakehub.py)."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import git, kbase_process, run_kbase
from fakehub import FakeHub
from indexkit import make_tiny_model
from querykit import query

from kbase_ci.index.modelchoice import digest
from kbase_ci.state.downloads import download_model

CONFIGURED = "acme/tiny-static"
EVIL = "mallory/payload"
FILES: dict[str, str | bytes] = {
    ".kbase.yml": f"embeddings:\n  model: {CONFIGURED}\n",
    ".gitignore": ".kbase/\n",
    "Soil.md": "# Soil\n\ngarden compost soil water\n",
    "Sql.md": "# Sql\n\ndatabase query table sql postgres\n",
}


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    state = FakeHub().start()
    monkeypatch.setenv("HF_ENDPOINT", state.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("KBASE_OFFLINE", raising=False)
    monkeypatch.delenv("KBASE_MODEL_PATH", raising=False)
    yield state
    state.stop()


def _rename_model(root: Path, model_id: str, sha: str) -> None:
    """Forge `.kbase/manifest.json` (the manifest is not among the hashed files: a forger
    rewrites it freely) to name another model."""
    path = root / ".kbase" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["embeddings"]["model"], manifest["embeddings"]["sha256"] = model_id, sha
    path.write_text(json.dumps(manifest))


def _status_model(root: Path) -> dict[str, object]:
    code, ans, err = query(root, "status")
    assert code == 0, err
    model: dict[str, object] = ans["model"]
    return model


def test_a_manifest_never_chooses_a_model_to_download(
        hub: FakeHub, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    hub.serve(make_tiny_model(tmp_path / "good" / "tiny"), CONFIGURED)
    evil = make_tiny_model(tmp_path / "evil" / "payload", seed=3)
    hub.serve(evil, EVIL)
    root = make_repo(FILES)
    assert run_kbase("index", cwd=root).returncode == 0
    hub.endless.add("model.safetensors")  # and, were it fetched, a body that never ends
    _rename_model(root, EVIL, digest(evil))
    asked = len(hub.asked)
    code, ans, err = query(root, "search", "compost soil")
    assert code == 0, err
    assert [p for _, p in hub.asked[asked:] if EVIL in p] == []  # not one request
    assert len(ans["notices"]) == 1 and f"model {EVIL}" in ans["notices"][0]
    assert ans["notices"][0].startswith("BM25 only: no model (")
    assert f"embeddings.model: {EVIL}" in ans["notices"][0]  # the user's choice to make
    model = _status_model(root)
    assert model["available"] is False and "not available here" in str(model["why"])
    assert [p for _, p in hub.asked[asked:] if EVIL in p] == []


def test_a_cached_model_the_user_did_not_choose_is_not_loaded(
        hub: FakeHub, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    """The hub cache holds models for other tools too: a manifest naming one of them
    (hash and all) does not make a query run it."""
    hub.serve(make_tiny_model(tmp_path / "good" / "tiny"), CONFIGURED)
    hub.serve(make_tiny_model(tmp_path / "evil" / "payload", seed=3), EVIL)
    cached = download_model(EVIL, "model2vec", intent="build")
    root = make_repo(FILES)
    assert run_kbase("index", cwd=root).returncode == 0
    _rename_model(root, EVIL, digest(cached))
    code, ans, err = query(root, "search", "compost soil")
    assert code == 0, err
    assert len(ans["notices"]) == 1 and "not available here" in ans["notices"][0]
    assert ans["results"][0]["evidence"]["cosine"] is None  # BM25 only
    # Chosen by the user, the same folder is used: the hash matches.
    code, ans, err = query(root, "search", "compost soil", "--model", str(cached))
    assert code == 0 and ans["notices"] == [], err


def test_status_says_where_the_model_is_and_what_fixes_its_absence(
        hub: FakeHub, make_repo: Callable[..., Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    tiny = make_tiny_model(tmp_path / "models" / "tiny-static")
    hub.serve(tiny, CONFIGURED)
    root = make_repo(FILES)
    assert run_kbase("index", cwd=root).returncode == 0
    model = _status_model(root)
    assert model["available"] is True and "found at" in str(model["why"])
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    asked = len(hub.asked)
    model = _status_model(root)  # status itself downloads nothing
    assert len(hub.asked) == asked
    assert model["available"] is False
    assert f"the next search downloads embeddings.model {CONFIGURED}" in str(model["why"])
    monkeypatch.setenv("KBASE_OFFLINE", "1")
    model = _status_model(root)
    assert model["available"] is False and "KBASE_MODEL_PATH" in str(model["why"])
    monkeypatch.setenv("KBASE_MODEL_PATH", str(tiny.parent))
    assert _status_model(root)["available"] is True
    proc = run_kbase("status", "--format", "text", cwd=root)
    assert "model here: available" in proc.stdout


# A normalizer whose charsmap tokenizers cannot parse: its Rust code panics, which pyo3
# raises as `PanicException`, a BaseException no `except Exception` catches.
PANIC = {"type": "Precompiled",
         "precompiled_charsmap": base64.b64encode(b"\xff" * 64).decode()}


def _poison(folder: Path) -> None:
    path = folder / "tokenizer.json"
    tok = json.loads(path.read_text())
    tok["normalizer"] = PANIC
    path.write_text(json.dumps(tok))


def _repo_with_model(make_repo: Callable[..., Path], tmp_path: Path) -> Path:
    root = make_repo({**FILES, ".kbase.yml": "embeddings:\n  model: models/tiny\n"})
    shutil.copytree(make_tiny_model(tmp_path / "tiny"), root / "models" / "tiny")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "model")
    assert run_kbase("index", cwd=root).returncode == 0
    return root


def test_a_tokenizer_that_panics_is_a_refused_model_not_a_crash(
        make_repo: Callable[..., Path], tmp_path: Path) -> None:
    """The model travels with the repository (a PR can change it) and the manifest's
    hash was forged to match: the query refuses the model, says why, ranks by BM25."""
    root = _repo_with_model(make_repo, tmp_path)
    _poison(root / "models" / "tiny")
    _rename_model(root, "models/tiny", digest(root / "models" / "tiny"))
    proc = kbase_process("search", "compost soil", cwd=root)
    assert proc.returncode == 0, proc.stderr
    ans = json.loads(proc.stdout)
    assert ans["results"][0]["path"] == "Soil.md"
    assert len(ans["notices"]) == 1 and "PanicException" in ans["notices"][0]
    assert "ranked by BM25 only" in ans["notices"][0]
    proc = kbase_process("search", "compost soil", "--mode", "semantic", cwd=root)
    assert proc.returncode == 2 and "PanicException" in proc.stderr
    assert "Traceback" not in proc.stderr
    # A build with it stops with the same words and exit 2.
    proc = kbase_process("index", cwd=root)
    assert proc.returncode == 2 and "PanicException" in proc.stderr, proc.stderr
