"""The arithmetic of bench.fusion_families and bench.verdict_proximity on small lists."""

from __future__ import annotations

from bench.fusion_families import minmax, rrf, zsum
from bench.verdict_proximity import pair_share, window_share
from kbase_ci.query.evidence import QueryTerms

LISTS = {"bm25": [["a", 9.0], ["b", 5.0], ["c", 1.0]],
         "semantic": [["c", 0.9], ["b", 0.8], ["d", 0.1]]}


def test_rrf_counts_ranks_of_both_lists() -> None:
    # c (first and third) beats a (first in one list only); d is last in one list only.
    order = rrf(60, 1.0)(LISTS)
    assert order.index("c") < order.index("a")
    assert order[-1] == "d"


def test_minmax_and_weight() -> None:
    assert minmax(1.0)(LISTS)[0] == "b"       # 0.5 + 0.875 against a's 1 and c's 1
    assert minmax(10.0)(LISTS)[0] == "c"      # 10 * 1 against b's 0.5 + 10 * 0.875


def test_zscore_fills_a_missing_note_with_the_lists_lowest() -> None:
    order = zsum(1.0, False)(LISTS)
    assert set(order) == {"a", "b", "c", "d"}
    assert order[-1] == "d"


def test_sureness_weights_follow_each_lists_gap() -> None:
    flat = {"bm25": [["a", 1.0], ["b", 1.0], ["c", 1.0]],
            "semantic": [["c", 0.9], ["b", 0.1], ["a", 0.0]]}
    # BM25 is flat (gap 0): the vectors alone decide.
    assert zsum(1.0, True)(flat)[0] == "c"


def _q(*terms: str) -> QueryTerms:
    return QueryTerms(tuple((t, t) for t in terms), {t: 1.0 for t in terms})


def test_window_share_sees_words_close_together_only() -> None:
    text = ["x"] * 5 + ["week"] + ["x"] * 30 + ["number"] + ["x"] * 5
    q = _q("week", "number")
    assert window_share(text, q, 12) == 0.5
    assert window_share(text, q, 50) == 1.0


def test_pair_share_counts_adjacent_query_pairs() -> None:
    q = _q("date", "picker", "week")
    assert pair_share(["the", "date", "picker", "shows"], q) == 0.5
    assert pair_share(["week", "x", "picker", "date"], q) == 1.0
    assert pair_share(["x"], _q("one")) == 1.0
