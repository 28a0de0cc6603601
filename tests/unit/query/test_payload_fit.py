"""`payload.fit` on lists far over the budget: the answer fits, keeps its first items in
order (the most relevant), and uses most of the budget (a guess from sampled items must
not cut far more than needed)."""

from __future__ import annotations

import pytest

from kbase_ci.query.payload import cost, dumps, fit, render

PRIMARY = (frozenset({"note"}), frozenset({"links"}))


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
