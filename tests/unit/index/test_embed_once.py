"""Issue 40: a build embeds each distinct text once, whichever shards hold it (the same
boilerplate paragraph in two folders was embedded once per shard), and the null questions
once per build (once per worker process before), with the bytes of embedding every
chunk: one process or two, all the same."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from indexkit import ONNX_MODEL, make_tiny_model, snapshot

from kbase_ci.index.chunks import chunk_note, embed_text
from kbase_ci.index.embedplan import EmbedPlan
from kbase_ci.index.indexbuild import build_index
from kbase_ci.index.shardbuild import Chunked, embedder_for, use_embedder
from kbase_ci.parse.parser import parse_note
from kbase_ci.vault.notefiles import Vault

np = pytest.importorskip("numpy")

MakeRepo = Callable[..., Path]
BOILER = "Written by the garden team. Python tomato database notes."
VAULT = {f"{folder}/{name}.md": f"# {name}\n\n{BOILER}\n\n{name} is about {topic}.\n\n{BOILER}\n"
         for folder, names in (("alpha", ("One", "Two")), ("beta", ("Three", "Four")))
         for name, topic in zip(names, ("python garden", "tomato query"), strict=True)}


def _chunked(sid: str, texts: Sequence[str], notes: int = 2) -> Chunked:
    return Chunked(sid, Path("/nowhere"), Path("/model"), None, 16, tuple("n" * len(texts)),
                   {}, tuple(texts), notes)


def test_the_plan_asks_for_each_text_once_and_says_when_a_shard_is_whole() -> None:
    plan = EmbedPlan(piece=2)
    pieces, ready = plan.add(_chunked("a", ["x", "y", "x", "z"]))
    assert pieces == [["x", "y"], ["z"]] and not ready
    more, ready_b = plan.add(_chunked("b", ["y", "w"]))
    assert more == [["w"]] and not ready_b  # y is on its way already
    rows = {t: np.full(4, i, dtype=np.float16) for i, t in enumerate("xyzw")}
    assert plan.took(["x", "y"], np.stack([rows["x"], rows["y"]])) == []
    assert plan.progress() == 1 + 1  # a: 2 of 3 texts of 2 notes; b: 1 of 2
    assert plan.took(["w"], rows["w"][None]) == ["b"]
    assert plan.took(["z"], rows["z"][None]) == ["a"]
    assert plan.progress() == 1 + 1 and plan.embedded == 4
    c, ready_c = plan.add(_chunked("c", ["w", "x"]))
    assert c == [] and ready_c and plan.ready(_chunked("c", []))
    assert np.array_equal(plan.rows(_chunked("a", ["x", "y", "x", "z"])),
                          np.stack([rows[t] for t in "xyxz"]))
    assert plan.rows(_chunked("d", [])) is None


class _Counting:
    """The tiny model, counting what it is asked (registered with `use_embedder`, the
    hook a scope's donor uses)."""

    def __init__(self, model: Any) -> None:
        self.model, self.dim = model, model.dim
        self.texts: list[str] = []
        self.queries: list[str] = []

    def encode(self, texts: Sequence[str], *, query: bool = False) -> Any:
        (self.queries if query else self.texts).extend(texts)
        return self.model.encode(texts, query=query)


def test_a_build_embeds_each_distinct_text_once(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo(VAULT)
    model = make_tiny_model(tmp_path / "tiny")
    counting = _Counting(embedder_for(model))
    use_embedder(model, None, counting)
    try:
        once = build_index(Vault(root), tmp_path / "one", model=model, jobs=1)
    finally:
        use_embedder(model, None, None)
    chunks = [embed_text(parse_note(p, t.encode()).title, c) for p, t in sorted(VAULT.items())
              for c in chunk_note(parse_note(p, t.encode()), t.encode())]
    # Two shards (one per folder), the boilerplate twice in each of the four notes.
    assert len(once.shards_built) == 2 and chunks.count(BOILER) == 8
    assert sorted(counting.texts) == sorted(set(chunks))  # each once, across both shards
    assert once.embedded == len(chunks) and once.texts_embedded == len(set(chunks))
    assert len(counting.queries) == len(set(counting.queries)) > 0  # null questions once
    twice = build_index(Vault(root), tmp_path / "two", model=model, jobs=2)
    assert twice.texts_embedded == len(set(chunks))
    assert snapshot(tmp_path / "one") == snapshot(tmp_path / "two")


@pytest.mark.skipif(not ONNX_MODEL.is_dir(), reason="shared ONNX model absent")
def test_onnxruntime_threads_never_spin() -> None:
    """A waiting onnxruntime thread spins by default, which costs a busy machine CPU for
    nothing; one thread or several, the sessions kbase makes do not spin."""
    from kbase_ci.index.transformer import TransformerEmbedder

    pytest.importorskip("onnxruntime")
    for threads in (1, 2):
        opts = TransformerEmbedder(ONNX_MODEL, threads=threads)._session.get_session_options()
        assert opts.intra_op_num_threads == threads
        assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        assert opts.get_session_config_entry("session.inter_op.allow_spinning") == "0"
