"""Model folders: a model2vec (static) or ONNX (transformer) folder is told apart by its
files, hashed by the files that decide its vectors, and opened by one function; the
transformer embeds each text alone, so a chunk's vector never depends on its company."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from indexkit import ONNX_MODEL, make_tiny_model

from kbase_ci.errors import UsageError
from kbase_ci.index.modelchoice import choose_model
from kbase_ci.index.modelfolder import (
    STATIC,
    TRANSFORMER,
    model_files,
    model_kind,
    open_embedder,
)
from kbase_ci.index.transformer import max_tokens, onnx_file, pooling, query_prefix

needs_onnx = pytest.mark.skipif(not ONNX_MODEL.is_dir(), reason=f"{ONNX_MODEL} absent")


def _fake_onnx_folder(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"not really a model")
    (folder / "tokenizer.json").write_text("{}", encoding="utf-8")
    return folder


def test_kinds_are_told_apart_by_their_files(tmp_path: Path) -> None:
    static = make_tiny_model(tmp_path / "static")
    assert model_kind(static) == STATIC
    assert [p.name for p in model_files(static)][:3] == ["config.json", "model.safetensors",
                                                         "tokenizer.json"]
    hub = _fake_onnx_folder(tmp_path / "hub", "model.safetensors", "onnx/model.onnx",
                            "onnx/model_O4.onnx")
    # A transformer repository carries its PyTorch weights too: the ONNX model wins.
    (hub / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    assert model_kind(hub) == TRANSFORMER
    assert onnx_file(hub) == hub / "onnx" / "model.onnx"
    both = _fake_onnx_folder(tmp_path / "both", "model.onnx", "model_quantized.onnx")
    assert onnx_file(both) == both / "model_quantized.onnx"  # int8 first: 3x faster
    assert model_files(both)[0].name == "model_quantized.onnx"
    (tmp_path / "empty").mkdir()
    assert model_kind(tmp_path / "empty") is None
    with pytest.raises(UsageError, match="not an embedding model folder"):
        model_files(tmp_path / "empty")
    with pytest.raises(UsageError, match="not an embedding model folder"):
        choose_model(tmp_path, None, tmp_path / "empty")


def test_transformer_settings_come_from_the_folder(tmp_path: Path) -> None:
    folder = _fake_onnx_folder(tmp_path / "m", "model.onnx")
    assert (pooling(folder), max_tokens(folder), query_prefix(folder)) == ("mean", 256, "")
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}),
        encoding="utf-8")
    (folder / "sentence_bert_config.json").write_text('{"max_seq_length": 512}',
                                                      encoding="utf-8")
    (folder / "config.json").write_text('{"max_position_embeddings": 384}', encoding="utf-8")
    (folder / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "query: ", "document": ""}}), encoding="utf-8")
    assert (pooling(folder), max_tokens(folder), query_prefix(folder)) == (
        "cls", 384, "query: ")
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps({"pooling_mode_max_tokens": True}), encoding="utf-8")
    with pytest.raises(UsageError, match="pooling_mode_max_tokens is not supported"):
        pooling(folder)
    with pytest.raises(UsageError, match="cannot load embedding model"):
        (folder / "1_Pooling" / "config.json").unlink()
        open_embedder(folder)  # the bytes are no ONNX model


@needs_onnx
def test_a_chunks_vector_does_not_depend_on_its_company(tmp_path: Path) -> None:
    import numpy as np

    texts = ["Extract an archive into the current directory", "", "short",
             "List the contents of a tar file verbosely " * 20]
    one = open_embedder(ONNX_MODEL)
    together = one.encode(texts)
    alone = np.vstack([one.encode([t]) for t in texts])
    assert together.tobytes() == alone.tobytes()
    assert not together[1].any()  # an empty text has no vector
    two = open_embedder(ONNX_MODEL, threads=2)
    assert two.encode(texts).tobytes() == together.tobytes()
    assert one.dim == 384 and open_embedder(ONNX_MODEL, 128).encode(texts).shape == (4, 128)
    with pytest.raises(UsageError, match="between 1 and the model's 384"):
        open_embedder(ONNX_MODEL, 999)
    # Unit rows, and a question lands near the paragraph that answers it.
    assert np.allclose(np.linalg.norm(together[[0, 2, 3]].astype(np.float32), axis=1), 1,
                       atol=2e-3)
    q = one.encode(["how do I unpack a tarball here"], query=True)[0].astype(np.float32)
    sims = together.astype(np.float32) @ q
    assert int(np.argmax(sims)) == 0
    # The choice hashes the files that decide the vectors, not the README.
    copy = tmp_path / "copy"
    shutil.copytree(ONNX_MODEL, copy)
    a = choose_model(tmp_path, None, copy)
    (copy / "README.md").write_text("changed", encoding="utf-8")
    assert choose_model(tmp_path, None, copy).sha256 == a.sha256 and a.kind == TRANSFORMER
    (copy / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    assert choose_model(tmp_path, None, copy).sha256 != a.sha256
