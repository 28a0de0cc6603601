"""The embedding model in any clone: the manifest names it (id, kind, content hash), and a
clone finds it through `--model`, `KBASE_MODEL_PATH`, `embeddings.model`, the hub cache,
or a download from the hub (a real HTTP server on 127.0.0.1 stands in for it through
`HF_ENDPOINT`); other weights are refused; without it, one notice says what fixes it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import git, run_kbase, write
from fakehub import FakeHub as Hub
from indexkit import make_tiny_model
from querykit import clone, publish_index, query

MODEL_ID = "acme/tiny-static"
FILES: dict[str, str | bytes] = {
    ".kbase.yml": f"embeddings:\n  model: {MODEL_ID}\n",
    "Soil.md": "# Soil\n\ngarden compost soil water\n",
    "Sql.md": "# Sql\n\ndatabase query table sql postgres\n",
}


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Hub]:
    state = Hub().start()
    monkeypatch.setenv("HF_ENDPOINT", state.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("KBASE_MODEL_PATH", raising=False)
    yield state
    state.stop()


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return make_tiny_model(tmp_path / "models" / "tiny-static")


def test_a_hub_model_is_downloaded_once_and_found_in_clones(
        hub: Hub, tiny: Path, make_repo: Callable[..., Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    hub.serve(tiny, MODEL_ID)
    src = make_repo(FILES)
    proc = run_kbase("index", cwd=src)
    assert proc.returncode == 0, proc.stderr
    assert f"downloading {MODEL_ID} model.safetensors" in proc.stderr  # no terminal: a line
    snap = tmp_path / "hub-cache" / "models--acme--tiny-static" / "snapshots"
    assert [p.name for p in snap.iterdir()] == ["c0ffee" + "0" * 34]
    manifest_emb = _embeddings(src)
    assert (manifest_emb["model"], manifest_emb["kind"]) == (MODEL_ID, "model2vec")
    asked = len(hub.asked)
    publish_index(src)
    cl = clone(src, tmp_path / "clone")
    code, ans, err = query(cl, "search", "compost soil")
    assert code == 0 and ans["notices"] == [], err
    assert ans["results"][0]["evidence"]["cosine"] is not None  # vectors in use
    assert len(hub.asked) == asked  # found in the cache: nothing downloaded again
    # A machine with an empty cache downloads it once, then finds it.
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "other-cache"))
    code, ans, err = query(cl, "search", "compost soil")
    assert code == 0 and ans["notices"] == [] and "downloading" in err
    code, ans, err = query(cl, "search", "compost soil")
    assert ans["notices"] == [] and "downloading" not in err


def test_offline_without_the_model_gives_one_notice_that_fixes_it(
        hub: Hub, tiny: Path, make_repo: Callable[..., Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    hub.serve(tiny, MODEL_ID)
    src = make_repo(FILES)
    assert run_kbase("index", cwd=src).returncode == 0
    publish_index(src)
    cl = clone(src, tmp_path / "clone")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    asked = len(hub.asked)
    code, ans, _ = query(cl, "search", "compost soil", "--offline")
    assert code == 0 and len(hub.asked) == asked  # no network at all
    assert len(ans["notices"]) == 1
    notice = ans["notices"][0]
    assert notice.startswith(f"BM25 only: no model (the index's embedding model {MODEL_ID} "
                             "(model2vec, named by the index) is not available here")
    assert f"embeddings.model is {MODEL_ID} (.kbase.yml)" in notice  # where the name is from
    assert "export KBASE_MODEL_PATH=DIR" in notice
    # The setting the notice names fixes it: a folder holding the model.
    monkeypatch.setenv("KBASE_MODEL_PATH", str(tiny.parent))
    code, ans, _ = query(cl, "search", "compost soil", "--offline")
    assert code == 0 and ans["notices"] == []


def test_other_weights_are_refused(hub: Hub, tiny: Path, make_repo: Callable[..., Path],
                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hub.serve(tiny, MODEL_ID)
    src = make_repo(FILES)
    assert run_kbase("index", cwd=src).returncode == 0
    other = make_tiny_model(tmp_path / "elsewhere" / "tiny-static", seed=11)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("KBASE_MODEL_PATH", str(other.parent))
    hub.serve(other, MODEL_ID)  # the hub moved on to other weights too
    code, ans, _ = query(src, "search", "compost soil", "--index", ".kbase")
    assert code == 0 and len(ans["notices"]) == 1
    assert "other weights refused" in ans["notices"][0]
    assert str(other) in ans["notices"][0]
    proc = run_kbase("search", "compost soil", "--model", str(other), cwd=src)
    assert proc.returncode == 2
    assert "not the model this index was built with" in proc.stderr
    assert "refused" in proc.stderr


def test_a_model_folder_in_the_repository_travels_with_it(
        make_repo: Callable[..., Path], tiny: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    src = make_repo({**FILES, ".kbase.yml": "embeddings:\n  model: models/tiny\n"})
    shutil.copytree(tiny, src / "models" / "tiny")
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "model")
    publish_index(src)
    cl = clone(src, tmp_path / "clone")
    code, ans, _ = query(cl, "search", "compost soil")
    assert code == 0 and ans["notices"] == []
    write(cl, {"models/tiny/model.safetensors": b"not the weights"})
    code, ans, _ = query(cl, "search", "compost soil")
    assert code == 0 and "other weights refused" in ans["notices"][0]


DEFAULT = "minishlab/potion-base-8M"
PLAIN = {k: v for k, v in FILES.items() if k != ".kbase.yml"}
"""A vault no `.kbase.yml` configures: its `embeddings.model` is kbase's default."""


def test_nobody_chose_the_default_model_so_a_clone_never_downloads_it(
        hub: Hub, tiny: Path, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    """An index built with another model (`--model`), in a clone with no `.kbase.yml`:
    the default model is nobody's choice and not the index's, so no query asks the hub
    for it (each query tried to, 5.8 s without a network); the text answer says it
    ranks by BM25 only, why, where the model names came from and what fixes it."""
    hub.serve(tiny, DEFAULT)  # were it asked, the hub would answer
    src = make_repo(PLAIN)
    publish_index(src, "--model", str(tiny))
    cl = clone(src, tmp_path / "clone")
    code, ans, err = query(cl, "search", "compost soil")
    assert code == 0, err
    assert hub.asked == []  # not one request
    (notice,) = ans["notices"]
    assert notice.startswith("BM25 only: no model (the index's embedding model tiny-static "
                             "(model2vec, named by the index) is not available here")
    assert f"embeddings.model is kbase's default {DEFAULT} (no .kbase.yml names a model)" \
        in notice and "(configured here)" not in notice
    assert "fix: `export KBASE_MODEL_PATH=DIR` with DIR holding tiny-static/" in notice
    proc = run_kbase("search", "compost soil", "--format", "text", cwd=cl)
    assert proc.returncode == 0, proc.stderr
    first, hit = proc.stdout.splitlines()[:2]
    assert first == notice and hit.startswith("Soil.md")
    assert hub.asked == []
    proc = run_kbase("status", cwd=cl)  # status says the same, and asks nothing either
    assert "not downloaded" in json.loads(proc.stdout)["model"]["why"]
    assert hub.asked == []


def test_the_default_model_is_downloaded_for_an_index_built_with_it(
        hub: Hub, tiny: Path, make_repo: Callable[..., Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No `.kbase.yml` anywhere: the build downloads the default, and a clone on another
    machine downloads it too (the index was built with it), unless offline."""
    hub.serve(tiny, DEFAULT)
    src = make_repo(PLAIN)
    publish_index(src)
    assert _embeddings(src)["model"] == DEFAULT
    cl = clone(src, tmp_path / "clone")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "other-cache"))
    asked = len(hub.asked)
    code, ans, _ = query(cl, "search", "compost soil", "--offline")
    assert code == 0 and len(hub.asked) == asked
    assert ans["notices"][0].startswith("BM25 only: no model (")
    code, ans, err = query(cl, "search", "compost soil")
    assert code == 0 and ans["notices"] == [] and "downloading" in err
    assert ans["results"][0]["evidence"]["cosine"] is not None


def test_a_failed_download_is_remembered_so_later_queries_rank_at_once(
        hub: Hub, tiny: Path, make_repo: Callable[..., Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An index built with the default model, in a clone whose hub cannot give it: the
    first query tries the download and ranks by BM25, and the queries after it go
    straight to BM25 with the notice (each one tried again, 5.8 s each without a network:
    issue 37) until `MISS_RETRY` has passed."""
    from kbase_ci.git.repo import git_dir
    from kbase_ci.index.modelchoice import MISS_RETRY
    from kbase_ci.state.memos import state_store

    hub.serve(tiny, DEFAULT)
    src = make_repo(PLAIN)
    publish_index(src)
    cl = clone(src, tmp_path / "clone")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "other-cache"))
    hub.models.clear()  # the hub has no such model now: every request is a 404
    before = len(hub.asked)
    code, ans, _ = query(cl, "search", "compost soil")
    assert code == 0 and "download failed" in ans["notices"][0]
    tried = len(hub.asked)
    assert tried > before
    for command in (("search", "compost soil"), ("search", "sql postgres", "--mode",
                                                  "hybrid")):
        code, ans, _ = query(cl, *command)
        (notice,) = ans["notices"]
        assert code == 0 and notice.startswith("BM25 only: no model (")
        assert "its download failed" in notice and "not tried again before" in notice
        assert "fix: run once with network access" in notice
    proc = run_kbase("status", cwd=cl)
    assert "its download failed" in json.loads(proc.stdout)["model"]["why"]
    assert len(hub.asked) == tried  # not one request more
    # once MISS_RETRY has passed (the memo's row made that old), a query asks again
    store = state_store(git_dir(cl) / "kbase")
    ((key, value),) = store.all("model_miss").items()
    row = json.loads(value)
    store.put("model_miss", key, json.dumps({**row, "at": row["at"] - MISS_RETRY - 1}))
    store.close()
    hub.serve(tiny, DEFAULT)
    code, ans, err = query(cl, "search", "compost soil")
    assert code == 0 and ans["notices"] == [] and "downloading" in err
    assert len(hub.asked) > tried


ONNX = Path(__file__).resolve().parents[3] / "shared" / "models" / "minilm-l6-onnx"


@pytest.mark.skipif(not ONNX.is_dir(), reason="../shared/models/minilm-l6-onnx is absent")
def test_an_onnx_hub_model_is_typed_by_its_config_and_found_in_clones(
        hub: Hub, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    """A hub id of a transformer: its config.json names a BERT, so kbase fetches the ONNX
    export (`onnx/model.onnx`, as sentence-transformers publishes it), not the PyTorch
    weights; the index records kind `onnx`, and a clone finds it in the cache."""
    files = {p.name: p.read_bytes() for p in ONNX.iterdir() if p.suffix == ".json"}
    files["onnx/model.onnx"] = (ONNX / "model_quantized.onnx").read_bytes()
    files["model.safetensors"] = b"PyTorch weights kbase must not fetch"
    hub.models["acme/tiny-onnx"] = files
    src = make_repo({**FILES, ".kbase.yml": "embeddings:\n  model: acme/tiny-onnx\n"})
    proc = run_kbase("index", cwd=src)
    assert proc.returncode == 0, proc.stderr
    snap = next((tmp_path / "hub-cache" / "models--acme--tiny-onnx" / "snapshots").iterdir())
    assert (snap / "onnx" / "model.onnx").is_file()
    assert not (snap / "model.safetensors").exists()
    emb = _embeddings(src)
    assert (emb["model"], emb["kind"], emb["library"], emb["dim"]) == (
        "acme/tiny-onnx", "onnx", "onnxruntime", 384)
    asked = len(hub.asked)
    publish_index(src)
    cl = clone(src, tmp_path / "clone")
    code, ans, _ = query(cl, "search", "compost for the garden soil")
    assert code == 0 and ans["notices"] == [] and ans["results"][0]["path"] == "Soil.md"
    assert len(hub.asked) == asked  # the cache answered


def _embeddings(root: Path) -> dict[str, object]:
    import json

    data: dict[str, object] = json.loads((root / ".kbase" / "manifest.json").read_text())[
        "embeddings"]
    return data
