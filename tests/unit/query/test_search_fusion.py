"""How hybrid search fuses BM25 and vector rankings (docs/query.md, "Search"): standardised
scores, weighted per model kind, a note missing from a list scoring what that list gives
nothing, and the weights read from the manifest as untrusted data."""

from __future__ import annotations

import math

import pytest

from kbase_ci.index.blocks import Fusion, Ranker
from kbase_ci.index.modelfolder import STATIC as STATIC_KIND
from kbase_ci.index.modelfolder import TRANSFORMER
from kbase_ci.index.ranking import NOTES, WEIGHTS, rankers_of, settings
from kbase_ci.query.fusion import fuse
from kbase_ci.query.hits import ChunkHit
from kbase_ci.query.search import _fuse
from kbase_ci.typedjson import ShapeError, decode, encode

STATIC = WEIGHTS[STATIC_KIND]


def order(lists: dict[str, list[tuple[str, float]]], rankers: dict[str, Ranker] = STATIC
          ) -> list[str]:
    return [p for p, _ in fuse(lists, rankers)]


def z(values: list[float], v: float) -> float:
    mean = sum(values) / len(values)
    return (v - mean) / math.sqrt(sum((x - mean) ** 2 for x in values) / len(values))


def test_scores_are_weighted_z_scores_with_floors_for_missing_notes() -> None:
    rankers = {"bm25": Ranker(1.0, None, "zero"), "semantic": Ranker(2.0, 2, "last")}
    bm25 = [("A.md", 6.0), ("B.md", 3.0), ("C.md", 1.0)]
    sem = [("C.md", 0.9), ("D.md", 0.7), ("A.md", 0.6)]  # A is below the depth of 2
    got = dict(fuse({"bm25": bm25, "semantic": sem}, rankers))
    b, s = [6.0, 3.0, 1.0], [0.9, 0.7]
    assert got["A.md"] == pytest.approx(z(b, 6.0) + 2.0 * z(s, 0.7))  # floor: the last
    assert got["B.md"] == pytest.approx(z(b, 3.0) + 2.0 * z(s, 0.7))
    assert got["C.md"] == pytest.approx(z(b, 1.0) + 2.0 * z(s, 0.9))
    assert got["D.md"] == pytest.approx(z(b, 0.0) + 2.0 * z(s, 0.7))  # BM25: no word


def test_a_rankers_scale_does_not_matter() -> None:
    """BM25 scores run 0..30, cosines 0..1: standardising makes them comparable, so
    multiplying one list's scores by any factor changes nothing."""
    bm25 = [("A.md", 9.0), ("B.md", 8.5), ("C.md", 2.0), ("E.md", 1.0)]
    sem = [("B.md", 0.8), ("C.md", 0.75), ("D.md", 0.5)]
    base = order({"bm25": bm25, "semantic": sem})
    scaled = order({"bm25": [(p, 40 * v) for p, v in bm25], "semantic": sem})
    assert base == scaled
    assert base[0] == "B.md"  # a near tie in BM25, broken by the vectors


def test_a_confident_bm25_answer_stays_first() -> None:
    bm25 = [("A.md", 30.0), ("B.md", 3.0), ("C.md", 2.5), ("D.md", 2.0), ("E.md", 1.5)]
    sem = [("B.md", 0.80), ("A.md", 0.78), ("F.md", 0.7), ("C.md", 0.6), ("D.md", 0.5)]
    assert order({"bm25": bm25, "semantic": sem})[0] == "A.md"


def test_one_ranker_alone_keeps_its_order_and_scores() -> None:
    assert fuse({"semantic": [("A.md", 0.6), ("B.md", 0.3)]}, STATIC) == [
        ("A.md", 0.6), ("B.md", 0.3)]
    assert fuse({"bm25": [("A.md", 8.0), ("B.md", 2.0)], "semantic": []}, STATIC) == [
        ("A.md", 8.0), ("B.md", 2.0)]


def test_bm25_alone_scores_over_its_best() -> None:
    got = _fuse({"bm25": [ChunkHit("A.md", (), 1, 1, 8.0), ChunkHit("B.md", (), 1, 1, 2.0)]}, None)
    assert [(n.path, n.score) for n in got] == [("A.md", 1.0), ("B.md", 0.25)]


def test_search_keeps_the_bm25_section_and_every_rank() -> None:
    bm25 = [ChunkHit("A.md", ("BM25 part",), 3, 4, 5.0), ChunkHit("B.md", (), 1, 1, 1.0)]
    sem = [ChunkHit("A.md", ("vector part",), 9, 9, 0.7), ChunkHit("C.md", (), 1, 1, 0.6)]
    fused = {n.path: n for n in _fuse({"bm25": bm25, "semantic": sem}, None)}
    assert fused["A.md"].section.heading_path == ("BM25 part",)
    assert fused["A.md"].ranks == {"bm25": (1, 5.0), "semantic": (1, 0.7)}
    assert fused["C.md"].section.heading_path == ()


def test_the_manifest_block_is_read_as_untrusted_data() -> None:
    block = settings(TRANSFORMER)
    assert block is not None and rankers_of(block) == WEIGHTS[TRANSFORMER]
    assert decode(Fusion, encode(block)) == block
    assert settings(None) is None and rankers_of(None) == STATIC
    good = {"weight": 1.0, "depth": 1, "floor": "zero", "stats": None}
    evil = {"method": "z-score", "stats": 100, "rankers": {"evil": good}}
    # A ranker this kbase does not fuse is left out; without the note-level list the
    # block is an index's from before it, fused as then (without it).
    assert rankers_of(decode(Fusion, evil)) == {k: v for k, v in STATIC.items()
                                                if k != NOTES}
    # A value no query can use is refused where the manifest is read, naming the key.
    for bad, key in [({"weight": float("nan")}, "weight"), ({"weight": True}, "weight"),
                     ({"weight": -1.0}, "weight"), ({"depth": -1}, "depth"),
                     ({"depth": 2.5}, "depth"), ({"floor": "up"}, "floor"),
                     ({"stats": 1}, "stats")]:
        with pytest.raises(ShapeError) as got:
            decode(Fusion, {**evil, "rankers": {"semantic": {**good, **bad}}})
        assert got.value.path == f'rankers["semantic"].{key}', got.value
