"""`payload.fit` on lists far over the budget: the answer fits, keeps its first items in
order (the most relevant), and uses most of the budget (a guess from sampled items must
not cut far more than needed)."""

from __future__ import annotations

import pytest

from kbase_ci.errors import UsageError
from kbase_ci.query.payload import cost, dumps, fit, render

PRIMARY = (frozenset({"note"}), ("links",))


def _answer(n: int) -> dict[str, object]:
    return {"note": "Big.md", "links": [
        {"path": f"folder/N{i}.md", "line": i + 3, "sentence": f"see [[N{i}]] ({i} of {n})."}
        for i in range(n)]}


@pytest.mark.parametrize(("items", "budget"), [(150, 2000), (5000, 2000), (60_000, 8000),
                                               (60_000, 300)])
def test_a_long_list_is_cut_to_a_prefix_that_fills_the_budget(items: int, budget: int) -> None:
    answer = _answer(items)
    out = fit(answer, budget, PRIMARY)
    text = dumps(out)
    assert cost(text) <= budget
    kept = out["links"]
    assert kept == answer["links"][:len(kept)] and kept  # a prefix, never empty
    assert out["truncated"]["lists"] == {"links": f"{len(kept)}/{items}"}
    assert out["truncated"]["tokens"] == cost(text)
    # One more item would not have fitted: the cut is as small as it can be, up to the
    # size of an item and the `truncated` record's own digits.
    bigger = dict(out, links=answer["links"][:len(kept) + 2])
    assert cost(dumps(bigger)) > budget
    assert render(answer, PRIMARY, max_tokens=budget) == text


def _search_like() -> dict[str, object]:
    return {
        "query": "q",
        "results": [{"path": f"deep/folder/a long note name {i}.md", "score": 1.0 - i / 10,
                     "sentence": f"hit {i} " + "words " * 40, "tags": ["t1", "t2"],
                     "missing": [], "section": None} for i in range(4)],
        "notices": [f"notice {i}: " + "a long explanation " * 12 for i in range(5)],
        "index": {"source_commit": "4b6d6bc" * 6, "built_at": "2026-11-28T08:43:39+00:00",
                  "stale_count": 0, "stale_notes": [], "overlaid": False, "origin": "dir"},
    }


MARKS = (frozenset({"query"}), ("results",))


def test_the_envelope_gives_way_before_the_main_list() -> None:
    answer = _search_like()
    whole = cost(dumps(answer))
    out = fit(answer, whole - 150, MARKS)  # about what four notices cost
    assert out["results"] == answer["results"]  # the main list untouched
    assert len(out["notices"]) >= 1
    assert out["truncated"]["lists"] == {"notices": f"{len(out['notices'])}/5"}
    assert out["index"]["source_commit"] == "4b6d6bc4b6d6"  # abbreviated, still there


@pytest.mark.parametrize("budget", [150, 220, 300, 400])
def test_no_list_that_had_items_is_emptied(budget: int) -> None:
    answer = _search_like()
    try:
        out = fit(answer, budget, MARKS)
    except UsageError:  # below what one item of each list needs: exit 2, said so
        assert budget < 300
        return
    assert cost(dumps(out)) <= budget
    assert len(out["results"]) >= 1 and len(out["notices"]) >= 1
    assert all(r["tags"] for r in out["results"])
    assert out["results"][0]["path"] == "deep/folder/a long note name 0.md"  # never cut
    lists = out["truncated"]["lists"]
    assert lists["results"] == f"{len(out['results'])}/4" and lists["notices"] == "1/5"
