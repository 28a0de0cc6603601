"""The HNSW graph of large shards (kbase_ci.index.ann): why plain cosine HNSW missed most
of the exact top 10 (embeddings in a narrow cone, queries outside it) and that the
centred inner-product graph finds them; same bytes on every build; a file that is not
this shard's graph is refused; a shard past the crossover gets one and search uses it.
(The build's bytes are the same every time: test_index_build checks whole folders.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from indexkit import TOPICS, make_tiny_model

from kbase_ci.errors import IndexFormatError
from kbase_ci.index import ann
from kbase_ci.index.indexbuild import build_index
from kbase_ci.index.reader import open_index
from kbase_ci.index.vectorfile import pack, quantize
from kbase_ci.index.vectors import Vectors
from kbase_ci.vault.notefiles import Vault

MakeRepo = Callable[..., Path]
DIM = 64


def cone(n: int, seed: int = 3) -> tuple[object, object]:
    """Rows crowded around one direction (mean cosine to their centroid ~0.9, like the
    generated vault's chunks) and queries well outside the cone (packed rows, queries)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    axis = rng.normal(size=DIM)
    axis /= np.linalg.norm(axis)
    topics = rng.normal(size=(2000, DIM))
    topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    rows = 3 * axis + topics[rng.integers(0, 2000, n)] + rng.normal(0, 0.08, (n, DIM))
    queries = topics[rng.integers(0, 2000, 100)] + rng.normal(0, 0.3, (100, DIM))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return pack(quantize(rows)), queries.astype(np.float32)


def with_graph(packed: object, folder: Path) -> Vectors:
    """The rows with their graph, as the reader opens a large shard."""
    import numpy as np

    graph, same = Vectors(packed, DIM).graph_files()  # type: ignore[arg-type]
    (folder / ann.FILE).write_bytes(graph)
    (folder / ann.SAME_FILE).write_bytes(same)
    return Vectors(packed, DIM, (folder / ann.FILE,  # type: ignore[arg-type]
                                 np.load(folder / ann.SAME_FILE)))


def recall(packed: object, queries: object, search: Callable[[object], object]) -> float:
    import numpy as np

    exact = Vectors(packed, DIM)  # type: ignore[arg-type]
    got = []
    for q in queries:  # type: ignore[attr-defined]
        want = exact.search(q, 10)
        kth = float(want.distances[-1])
        found = search(q)
        sims = exact.rows_cosine(np.asarray(found, dtype=np.int64), q / np.linalg.norm(q))
        got.append(float(np.sum(1.0 - sims <= kth + 1e-6)) / 10)
    return sum(got) / len(got)


def test_the_centred_graph_finds_what_plain_cosine_hnsw_misses(tmp_path: Path) -> None:
    import numpy as np
    from usearch.index import Index

    packed, queries = cone(8000)
    unit = Vectors(packed, DIM).unit_rows()  # type: ignore[arg-type]
    mean_cos = float((unit @ (unit.mean(0) / np.linalg.norm(unit.mean(0)))).mean())
    assert mean_cos > 0.85
    plain = Index(ndim=DIM, metric="cos", dtype="f16", connectivity=16, expansion_search=64)
    plain.add(np.arange(len(unit), dtype=np.uint64), unit, threads=1)
    low = recall(packed, queries, lambda q: plain.search(q, 10).keys)
    graph = with_graph(packed, tmp_path)
    high = recall(packed, queries, lambda q: graph.search(q, 10).keys)
    assert high >= 0.95 and high > low + 0.1, (low, high)
    # Scores are exact cosines of the stored rows, as the scan gives them.
    q = queries[0]  # type: ignore[index]
    a, b = graph.search(q, 5), Vectors(packed, DIM).search(q, 5)  # type: ignore[arg-type]
    common = set(a.keys.tolist()) & set(b.keys.tolist())
    for key in common:
        i, j = a.keys.tolist().index(key), b.keys.tolist().index(key)
        assert a.distances[i] == pytest.approx(b.distances[j], abs=1e-5)


def test_equal_rows_are_one_point_of_the_graph_and_all_found(tmp_path: Path) -> None:
    """Thousands of identical rows (heading chunks such as `## Overview`) cut an HNSW
    graph apart; the graph holds each distinct row once and search returns every chunk
    that has it, as the scan would (ties by chunk number)."""
    import numpy as np

    packed, queries = cone(4000, seed=9)
    rows = np.asarray(packed)
    dup = np.repeat(rows[:3], 700, axis=0)  # 2,100 chunks with one of three rows
    mixed = np.vstack([rows[3:], dup, np.full((5, rows.shape[1]), 0x88, np.uint8)])
    graph = with_graph(mixed, tmp_path)
    same = np.load(tmp_path / ann.SAME_FILE)
    assert len(np.unique(same[same >= 0])) == len(rows) - 3 + 3 and (same[-5:] == -1).all()
    scan = Vectors(mixed, DIM)
    for q in [Vectors(rows[:1], DIM).unit_rows()[0], *queries[:20]]:  # type: ignore[index]
        want, got = scan.search(q, 50), graph.search(q, 50)
        assert got.keys.tolist() == want.keys.tolist()


def test_graph_bytes_depend_only_on_the_rows_and_a_foreign_file_is_refused(
        tmp_path: Path) -> None:
    packed, _ = cone(3000, seed=5)
    vecs = Vectors(packed, DIM)  # type: ignore[arg-type]
    assert vecs.graph_files() == Vectors(packed, DIM).graph_files()  # type: ignore[arg-type]
    path = tmp_path / ann.FILE
    path.write_bytes(vecs.graph_files()[0])
    assert len(ann.Graph(path, DIM, 3000).candidates(vecs.unit_rows()[0], 5)) == 5
    with pytest.raises(IndexFormatError, match="not the vector graph of this shard"):
        ann.Graph(path, DIM, 500)  # a graph of 3000 rows in a shard of 500
    with pytest.raises(IndexFormatError, match="not the vector graph of this shard"):
        ann.Graph(path, DIM * 2, 3000)
    path.write_bytes(b"\0" * 64)
    with pytest.raises(IndexFormatError, match="not the vector graph"):
        ann.Graph(path, DIM, 3000)


def test_a_shard_past_the_crossover_is_searched_by_its_graph(make_repo: MakeRepo,
                                                             tmp_path: Path) -> None:
    words = sorted({w for t in TOPICS.values() for w in t.split()})
    notes = {}
    per_note = 25
    for i in range(ann.MIN_ROWS // per_note + 1):
        paras = [" ".join(words[(i * 7 + j * 3 + k) % len(words)] for k in range(6))
                 for j in range(per_note)]
        notes[f"n/{i:05d}.md"] = "\n\n".join(paras) + "\n"
    root = make_repo(notes)
    model = make_tiny_model(tmp_path / "tiny")
    built = build_index(Vault(root), root / ".kbase", model=model, jobs=1)
    (shard,) = [s for s, m in built.manifest.shards.items() if m.chunks > 1]
    assert built.manifest.shards[shard].vectors >= ann.MIN_ROWS
    assert f"shards/{shard}/{ann.FILE}" in built.manifest.files
    reader = open_index(root / ".kbase")
    vecs = reader.vectors(shard)
    assert vecs.graph_path is not None
    scan = Vectors(vecs.packed, vecs.ndim)
    assert f"shards/{shard}/{ann.SAME_FILE}" in built.manifest.files
    for row in (5, 777, 20_000):
        q = scan.unit_rows()[row]
        # Many rows share a vector here (few words): compare scores, not row numbers.
        assert vecs.search(q, 10).distances.tolist() == pytest.approx(
            scan.search(q, 10).distances.tolist(), abs=1e-5)
