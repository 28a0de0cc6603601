"""Property-based forgeries of what native code reads (issue 28): `.npy` headers (any
dtype string, any shape), usearch graph bytes, and a model's `tokenizer.json`. The
properties: an index is refused with an IndexFormatError or read, a graph is refused by
`graphcheck` or walked by usearch without crashing the process, a model loads and
embeds or is refused with a kbase error. Never any other exception, never a crash.
Sized like tests/slow/test_fuzz.py (`KBASE_FUZZ_SCALE` multiplies the examples)."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import tempfile
from contextlib import suppress
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kbase_ci.errors import IndexFormatError, KbaseError
from kbase_ci.index import ann
from kbase_ci.index.graphcheck import check_graph
from kbase_ci.index.modelfolder import open_embedder
from kbase_ci.index.reader import open_index
from kbase_ci.index.validation import validate
from tests.conftest import indexed_repo
from tests.indexkit import make_tiny_model
from tests.slow.test_fuzz import fuzz


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzznative") / "repo"
    make_tiny_model(root / "models" / "tiny")
    return indexed_repo(root, {"A.md": "# A\n\ngarden soil [[B]]\n",
                               "B.md": "# B\n\nsql table [[A]]\n",
                               ".kbase.yml": "embeddings:\n  model: models/tiny\n"})


DESCRS = st.sampled_from(["<f1", "<f2", "<f4", "<f8", "|u1", "|i1", "<u2", "<u8", ">i4",
                          "|O", "<U8", "|S4", "<c8", "V3", "<m8", "x", ""]) | st.text(
    max_size=5)
SHAPES = st.lists(st.integers(-2, 2**40) | st.integers(0, 64), max_size=3).map(
    lambda dims: "(" + "".join(f"{d}, " for d in dims) + ")")


@fuzz(80)
@given(data=st.data())
def test_forged_npy_headers_are_refused_or_read(built: Path, data: st.DataObject) -> None:
    index = built / ".kbase"
    names = sorted(p.relative_to(index).as_posix() for p in index.rglob("*.npy"))
    rel = data.draw(st.sampled_from(names))
    original = (index / rel).read_bytes()
    start = 10 + int.from_bytes(original[8:10], "little")
    descr, shape = data.draw(DESCRS), data.draw(SHAPES)
    head = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    head = head.ljust(max(len(head) + 1, start - 10) - 1) + "\n"
    forged = original[:8] + len(head).to_bytes(2, "little") + head.encode() + \
        original[start:]
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "idx"
        shutil.copytree(index, copy)
        (copy / rel).write_bytes(forged)
        manifest = json.loads((copy / "manifest.json").read_bytes())
        manifest["files"][rel] = hashlib.sha256(forged).hexdigest()
        (copy / "manifest.json").write_text(json.dumps(manifest))
        with suppress(IndexFormatError):
            reader = open_index(copy)
            validate(reader)


def _graph(n: int) -> bytes:
    from usearch.index import Index

    index = Index(ndim=8, metric="ip", dtype="f16", connectivity=ann.PARAMS["connectivity"],
                  expansion_add=32)
    rows = np.random.default_rng(1).standard_normal((n, 8)).astype(np.float32)
    index.add(np.arange(n, dtype=np.uint64), rows, threads=1)
    return bytes(index.save())


GRAPH = _graph(200)


@fuzz(150)
@given(edits=st.lists(st.tuples(st.integers(0, len(GRAPH) - 1), st.binary(min_size=1,
                                                                          max_size=8)),
                      min_size=1, max_size=4),
       cut=st.integers(0, 64))
def test_forged_graphs_are_refused_or_walked(edits: list[tuple[int, bytes]],
                                             cut: int) -> None:
    data = bytearray(GRAPH)
    for at, chunk in edits:
        data[at:at + len(chunk)] = chunk
    forged = bytes(data[:len(data) - cut] if cut else data)
    try:
        check_graph(forged, 8, 200, int(ann.PARAMS["connectivity"]))
    except IndexFormatError:
        return
    from usearch.index import Index  # passed: usearch must read it within bounds

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.usearch"
        path.write_bytes(forged)
        index = Index(ndim=8, metric="ip", dtype="f16",
                      connectivity=ann.PARAMS["connectivity"])
        index.view(str(path))
        index.search(np.ones(8, dtype=np.float32), 10)


NORMALIZERS = st.sampled_from([
    None, {"type": "Lowercase"}, {"type": "NFKC"},
    {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(b"\xff" * 32).decode()},
    {"type": "Precompiled", "precompiled_charsmap": ""},
    {"type": "Replace", "pattern": {"Regex": "(a*)*$"}, "content": ""},
    {"type": "Sequence", "normalizers": [{"type": "Nope"}]}, {"type": 7}, [], "x"])
PRE = st.sampled_from([None, {"type": "Whitespace"}, {"type": "Metaspace"},
                       {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated",
                        "invert": False},
                       {"type": "Split", "pattern": {"Regex": ""}, "behavior": "Removed",
                        "invert": True},
                       {"type": "ByteLevel", "add_prefix_space": "yes"}]) | st.builds(
    lambda rx: {"type": "Split", "pattern": {"Regex": rx}, "behavior": "Isolated",
                "invert": False}, st.text(max_size=6))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny")


@fuzz(60)
@given(normalizer=NORMALIZERS, pre=PRE, model_type=st.sampled_from(
    ["WordLevel", "BPE", "Unigram", "WordPiece", 3]))
def test_forged_tokenizers_are_refused_or_run(tiny: Path, normalizer: object, pre: object,
                                              model_type: object) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "m"
        shutil.copytree(tiny, folder)
        tok = json.loads((folder / "tokenizer.json").read_text())
        tok["normalizer"], tok["pre_tokenizer"] = normalizer, pre
        if model_type != "WordLevel":
            tok["model"]["type"] = model_type
        (folder / "tokenizer.json").write_text(json.dumps(tok))
        with suppress(KbaseError):
            model = open_embedder(folder)
            out = model.encode(["garden soil", "", "é \x00 日本"])
            assert out.shape == (3, model.dim)
