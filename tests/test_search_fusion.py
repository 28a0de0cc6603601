"""How hybrid search fuses BM25 and vector rankings (docs/query.md, "Search"): a confident
BM25 answer stays first, vectors break near-ties and bring in notes BM25 missed."""

from __future__ import annotations

from kbase_ci.query.hits import ChunkHit
from kbase_ci.query.search import SEMANTIC_WEIGHT, _fuse


def hits(*pairs: tuple[str, float]) -> list[ChunkHit]:
    return [ChunkHit(path, (), 1, 1, score) for path, score in pairs]


def order(lists: dict[str, list[ChunkHit]]) -> list[str]:
    return [n.path for n in _fuse(lists)]


def test_a_confident_bm25_answer_is_not_reordered_by_vectors() -> None:
    # Reciprocal-rank fusion put B first here: BM25's ranks 1 and 2 are 1/61 and 1/62
    # apart, less than the vectors' 0.08/61 for B. A has twice B's BM25 score.
    got = order({"bm25": hits(("A.md", 10.0), ("B.md", 5.0)),
                 "semantic": hits(("B.md", 0.9), ("C.md", 0.5))})
    assert got[0] == "A.md"


def test_vectors_break_a_bm25_near_tie_and_add_notes_bm25_missed() -> None:
    got = order({"bm25": hits(("A.md", 10.0), ("B.md", 9.9)),
                 "semantic": hits(("B.md", 0.8), ("A.md", 0.2), ("C.md", 0.7))})
    assert got == ["B.md", "A.md", "C.md"]


def test_scores_are_bm25_over_the_best_plus_weighted_similarity() -> None:
    fused = {n.path: n for n in _fuse({"bm25": hits(("A.md", 4.0), ("B.md", 2.0)),
                                       "semantic": hits(("A.md", 0.5), ("C.md", 0.25))})}
    assert fused["A.md"].score == 1.0 + SEMANTIC_WEIGHT * 0.5
    assert fused["B.md"].score == 0.5 + SEMANTIC_WEIGHT * 0.25  # not listed: the lowest
    assert fused["C.md"].score == SEMANTIC_WEIGHT * 0.25
    assert fused["A.md"].ranks == {"bm25": (1, 4.0), "semantic": (1, 0.5)}


def test_one_ranker_alone_keeps_its_order_and_scores() -> None:
    assert [(n.path, n.score) for n in _fuse({"semantic": hits(("A.md", 0.6),
                                                                ("B.md", 0.3))})] == \
        [("A.md", 0.6), ("B.md", 0.3)]
    assert [(n.path, n.score) for n in _fuse({"bm25": hits(("A.md", 8.0), ("B.md", 2.0)),
                                              "semantic": []})] == \
        [("A.md", 1.0), ("B.md", 0.25)]
