"""The static encoder reads every model2vec folder a user can download (plain, int8 and
vocabulary-quantized tables) as model2vec computes it, and refuses forged ones with a
located error before reading their tensors."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from indexkit import (
    REAL_MODEL,
    make_tiny_model,
    quantized_models,
    read_static_table,
    save_static_model,
    write_safetensors,
)

from kbase_ci.errors import UsageError

np = pytest.importorskip("numpy")
pytest.importorskip("tokenizers")

REFERENCE = json.loads((Path(__file__).parent / "model2vec_reference.json").read_text())
"""model2vec 0.10.0's `tokenize` and normalised `encode` (first 32 components) on the
shared model and on the int8 and vocabulary-quantized folders `quantized_models` builds,
recorded when kbase still depended on it."""


def _embedder(folder: Path, dim: int | None = None) -> Any:
    from kbase_ci.index.embedder import Embedder

    return Embedder(folder, dim)


@pytest.mark.skipif(not REAL_MODEL.is_dir(), reason="shared model absent")
def test_every_table_kind_encodes_as_model2vec(tmp_path: Path) -> None:
    folders = {"plain": REAL_MODEL, **quantized_models(REAL_MODEL, tmp_path)}
    texts = REFERENCE["texts"]
    for name, folder in folders.items():
        want = REFERENCE["models"][name]
        e = _embedder(folder)
        assert e.tokenize(texts) == want["ids"], name
        got = e.encode(texts).astype(np.float64)[:, :REFERENCE["dims"]]
        assert np.allclose(got, np.asarray(want["vectors"]), atol=1e-3), name
    # int8 keeps the plain model's directions (one scale for the whole table).
    plain, int8 = (_embedder(folders[k]).encode(texts).astype(np.float64)
                   for k in ("plain", "int8"))
    assert (np.einsum("ij,ij->i", plain, int8) > 0.999).all()


def test_vocabulary_quantized_vector_is_weighted_mean_of_mapped_rows(tmp_path: Path) -> None:
    from tokenizers import Tokenizer

    tiny = make_tiny_model(tmp_path / "tiny")
    tok = Tokenizer.from_file(str(tiny / "tokenizer.json"))
    n = tok.get_vocab_size()
    rows = np.random.default_rng(3).normal(0, 1, (5, 8)).astype(np.float32)
    mapping = np.arange(n, dtype=np.int64) % 5
    weights = np.linspace(0.5, 2.0, n).astype(np.float32)
    folder = save_static_model(tmp_path / "vq", rows, tok, mapping=mapping, weights=weights)
    text = "python garden the tomato python"
    ids = [i for i in tok.encode(text, add_special_tokens=False).ids]
    want = sum(weights[i] * rows[mapping[i]].astype(np.float64) for i in ids)
    want = want / np.linalg.norm(want)
    got = _embedder(folder).encode([text])[0].astype(np.float64)
    assert np.allclose(got, want, atol=1e-3)


def test_tokens_are_the_tokenizers_without_unknowns_cut_at_max_length(tmp_path: Path) -> None:
    """The word cache gives the tokenizer's own ids (as model2vec's `tokenize`: no special
    tokens, unknown tokens dropped, the first `max_length` kept), for a tokenizer it is
    used for and one (Metaspace) it is not."""
    from tokenizers import Tokenizer, pre_tokenizers

    texts = ["Python, generator! zzz the", "", "ünïcode 日本語 x\u00a0y  tabs\there",
             "python " * 600]
    tiny = make_tiny_model(tmp_path / "tiny")
    other = make_tiny_model(tmp_path / "metaspace")
    tok = Tokenizer.from_file(str(other / "tokenizer.json"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.save(str(other / "tokenizer.json"))
    for folder in [tiny, other] + ([REAL_MODEL] if REAL_MODEL.is_dir() else []):
        ref = Tokenizer.from_file(str(folder / "tokenizer.json"))
        ref.no_padding()
        ref.enable_truncation(512)
        unk = ref.token_to_id("[UNK]")
        want = [[i for i in e.ids if i != unk]
                for e in ref.encode_batch(texts, add_special_tokens=False)]
        assert _embedder(folder).tokenize(texts) == want, folder.name


def _forge(folder: Path, header: dict[str, Any] | bytes, data: bytes = b"") -> None:
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw + data)


def _t(dtype: str, shape: list[int], start: int, end: int) -> dict[str, Any]:
    return {"dtype": dtype, "shape": shape, "data_offsets": [start, end]}


def test_forged_model_files_are_refused_with_the_file_named(tmp_path: Path) -> None:
    folder = make_tiny_model(tmp_path / "m")
    n = len(read_static_table(folder))
    good = np.zeros((n, 4), dtype=np.float32).tobytes()
    cases: list[tuple[Any, bytes, str]] = [
        (b"{not json", b"", "header is not JSON"),
        (b"[1, 2]", b"", "not a JSON object"),
        ({"embeddings": _t("F32", [n, 4], 0, len(good) + 4)}, good, "outside"),
        ({"embeddings": _t("F32", [n, 5], 0, len(good))}, good, "bytes for shape"),
        ({"embeddings": _t("BF16", [n, 8], 0, len(good))}, good, "not supported"),
        ({"embeddings": _t("F32", [n, -4], 0, len(good))}, good, "bad shape"),
        ({"embeddings": _t("F32", [n, 4], 0, len(good)),
          "weights": _t("F32", [n], 8, 8 + 4 * n)}, good, "overlap"),
        ({"embeddings": _t("F32", [n - 1, 4], 0, len(good) - 16)}, good, "tokenizer of"),
        ({"embeddings": _t("I32", [n, 4], 0, len(good))}, good, "token table must be"),
        ({"embeddings": _t("F32", [n * 4], 0, len(good))}, good, "token table must be"),
        ({"other": _t("F32", [n, 4], 0, len(good))}, good, "one token table"),
        ({"embeddings": _t("F32", [n, 4], 0, len(good)),
          "mapping": _t("I64", [n], len(good), len(good) + 8 * n)},
         good + np.full(n, n + 9, np.int64).tobytes(), "outside the"),
        ({"embeddings": _t("F32", [n, 4], 0, len(good))},
         np.full((n, 4), np.nan, np.float32).tobytes(), "NaN"),
    ]
    for header, data, message in cases:
        _forge(folder, header, data)
        with pytest.raises(UsageError, match=message) as got:
            _embedder(folder)
        assert "model.safetensors" in str(got.value), message
    # A header length past the end of the file, and a file shorter than its length field.
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
    with pytest.raises(UsageError, match="header of"):
        _embedder(folder)
    (folder / "model.safetensors").write_bytes(b"\x01\x02")
    with pytest.raises(UsageError, match="not a safetensors file"):
        _embedder(folder)


def test_forged_config_and_tokenizer_are_refused(tmp_path: Path) -> None:
    folder = make_tiny_model(tmp_path / "m")
    config = json.loads((folder / "config.json").read_text())
    for bad, message in (({"normalize": "yes"}, "normalize"),
                         ({"max_length": -3}, "max_length"),
                         ({"max_length": 1.5}, "max_length")):
        (folder / "config.json").write_text(json.dumps({**config, **bad}))
        with pytest.raises(UsageError, match=message):
            _embedder(folder)
    (folder / "config.json").write_text(json.dumps({**config, "max_length": None}))
    assert len(_embedder(folder).tokenize(["python " * 700])[0]) == 700  # null: all kept
    (folder / "config.json").write_text(json.dumps(config))
    with (folder / "tokenizer.json").open("r+b") as f:  # sparse: no disk used
        f.truncate(200 << 20)
    with pytest.raises(UsageError, match="more than the 134217728 bytes"):
        _embedder(folder)


def test_dim_and_zero_rows(tmp_path: Path) -> None:
    folder = make_tiny_model(tmp_path / "m")
    e = _embedder(folder, 6)
    got = e.encode(["python garden", "", "zzz"])
    assert got.shape == (3, 6) and got.dtype == np.float16
    assert abs(float(np.linalg.norm(got[0].astype(np.float64))) - 1) < 1e-2
    assert not got[1].any() and not got[2].any()
    with pytest.raises(UsageError, match=r"embeddings\.dim"):
        _embedder(folder, 17)
    write_safetensors(folder / "model.safetensors",
                      {"embeddings": read_static_table(folder).astype(np.float64)})
    assert np.array_equal(_embedder(folder, 6).encode(["python garden"]), got[:1])
