"""The arithmetic of bench.verdict_features and bench.verdict_model on small rows."""

from __future__ import annotations

from typing import Any

import pytest

from bench.verdict_features import features, shipped
from bench.verdict_model import fit_lr, fit_single, fit_tree, kinds, logistic, rates


def _hit(level: str = "low", **kw: Any) -> dict[str, Any]:
    return {"path": "a.md", "level": level, "named": False, "coverage": 1.0,
            "idf_coverage": 0.8, "cosine": 0.5, "margin": 1.0, "bm25_rank": 1, "bm25": 5.0,
            "sem_rank": 2, "fused": 3.0, "chunk_idf": 0.4, "note_idf": 0.8,
            "chunk_terms": 2, "note_terms": 4, "rare1_chunk": True, "rare1_note": True,
            "rare2_chunk": False, "rare2_note": True, "rare2_any_chunk": True,
            "chunk_cos": 0.4, "note_cos": 0.5, **kw}


def _row(answerable: bool, unknown: int = 0, kind: str | None = None,
         hits: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    row = {"kind": kind or ("paraphrase" if answerable else "absent-hard"), "query": "q",
           "answers": ["a.md"] if answerable else [], "terms": 4, "unknown": unknown,
           "rare_share": 0.3, "fused": [3.0, 1.0],
           "bm25_top": [["a.md", 5.0], ["b.md", 4.0]],
           "semantic_top": [["b.md", 0.6], ["a.md", 0.5]],
           "hits": hits if hits is not None else [_hit()]}
    row["_f"] = features(row)
    return row


def test_features_read_the_verdicts_hit_and_both_lists() -> None:
    row = _row(True, unknown=1, hits=[_hit("none", sem_rank=None), _hit("low")])
    f = row["_f"]
    assert shipped(row)
    assert f["hit_sem"] == 0.5                      # the second hit, the first `low` one
    assert f["agree"] == 0.0 and f["b_in_s"] == 1.0 and f["s_in_b"] == 1.0
    assert f["chunk_share"] == pytest.approx(0.5)
    assert f["chunk_cos"] == pytest.approx(-0.1)
    assert f["bm25_ratio"] == pytest.approx(0.8)
    assert f["unknown"] == 0.25 and f["fused_gap"] == 2.0
    assert not shipped(_row(True, hits=[_hit("none")]))


def test_rates_and_kinds() -> None:
    rows = [_row(True), _row(True, hits=[_hit("none")]), _row(False),
            _row(False, kind="absent-far", hits=[_hit("none")]),
            _row(False, kind="absent", hits=[])]
    assert rates(rows, shipped) == pytest.approx((0.5, 2 / 3))
    got = kinds(rows, shipped)
    assert (got["hard"], got["hard/"], got["far"], got["absent"]) == (0, 1, 1, 1)


def _groups() -> list[list[dict[str, Any]]]:
    # Answers have one unknown term or none; absent topics, two of four.
    return [[_row(True), _row(True, unknown=1), _row(False, unknown=2), _row(False, 2)]
            for _ in range(3)]


def test_a_one_feature_veto_finds_the_separating_threshold() -> None:
    groups = _groups()
    assert rates(groups[0], shipped) == (1.0, 0.0)
    ok = fit_single(groups, ["margin", "unknown"])
    assert rates(groups[0], ok) == (1.0, 1.0)


def test_the_veto_regression_and_the_tree_learn_the_same_split() -> None:
    groups = _groups()
    assert rates(groups[0], fit_lr(groups, ["unknown", "margin"], True)) == (1.0, 1.0)
    assert rates(groups[0], fit_tree(groups, ["margin", "unknown"])) == (1.0, 1.0)


def test_a_capped_veto_keeps_every_answer() -> None:
    # One answer looks like the absent topics: the capped fit may not veto it.
    groups = [[*g, _row(True, unknown=2)] for g in _groups()]
    capped = fit_lr(groups, ["unknown"], True, cap=0.0)
    assert rates(groups[0], capped)[0] == 1.0


def test_logistic_regression_orders_by_the_feature() -> None:
    import numpy as np

    x = np.array([[-1.0, 1.0], [-0.5, 1.0], [0.5, 1.0], [1.0, 1.0]])
    beta = logistic(x, np.array([0.0, 0.0, 1.0, 1.0]), np.full(4, 0.25))
    assert beta[0] > 0
    assert abs(beta[1]) < 1e-6
