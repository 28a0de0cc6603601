"""Name mentions (kbase_ci.parse.namematch): the cases of fixtures/parser/namematch.txt,
and the walk stays linear in the text with many names."""

from __future__ import annotations

import pytest
from conftest import FIXTURES
from tables import arrows, decode

from kbase_ci.parse.namematch import Matcher, cut
from tests.complexity import assert_linear

_TABLE = FIXTURES / "parser" / "namematch.txt"


def _cases() -> list[tuple[str, str]]:
    return [pytest.param(given, expected, id=f"namematch.txt:{no}")  # type: ignore[misc]
            for no, given, expected in arrows(_TABLE)]


@pytest.mark.parametrize(("given", "expected"), _cases())
def test_found(given: str, expected: str) -> None:
    names, sep, text = given.partition(" :: ")
    assert sep
    matcher = Matcher({n: [n] for n in names.split(" ; ")})
    body = decode(text).decode("utf-8")
    found = matcher.find(body)
    body = body.replace("\r\n", "\n").replace("\r", "\n")  # what offsets count in
    hits = [f'{h.line}:{h.col} {h.target} "{" ".join(body[h.offset:h.offset + h.length].split())}"'
            for h in found]
    assert (" ; ".join(hits) or "-") == expected


def test_skipped_names_are_reported_and_kept_names_are_not() -> None:
    matcher = Matcher({"Index": [1], "DE": [2], "Docker": [3], "The Notes": [4]})
    assert matcher.skipped == ["DE", "Index", "The Notes"]
    assert cut("Docker") is not None and cut("   ") is None


def test_one_name_for_many_targets_hits_each_once() -> None:
    matcher = Matcher({"Docker": ["a", "b"], "docker": ["b", "c"]})
    assert [(h.target, h.col) for h in matcher.find("docker")] == \
        [("a", 1), ("b", 1), ("c", 1)]


def test_a_long_line_of_near_misses_is_linear() -> None:
    """`Apache` 100k times without `Kafka`: every start fails after one word."""
    matcher = Matcher({"Apache Kafka": [1], "Apache Spark Streaming": [2]})
    assert matcher.find("Apache " * 100_000 + "Apache Kafka")[0].col == 700_001


def _vault(n: int) -> tuple[dict[str, list[int]], list[str]]:
    """n notes titled `Topic i Widget`, each naming its next 3 neighbours and writing
    `Topic` (a first word that starts every title) 20 times."""
    names = {f"Topic {i} Widget": [i] for i in range(n)}
    texts = [" ".join(f"See Topic {(i + k) % n} Widget. Topic of the day." for k in (1, 2, 3))
             + " Topic" * 20 for i in range(n)]
    return names, texts


def _find_all(vault: tuple[dict[str, list[int]], list[str]]) -> int:
    matcher = Matcher(vault[0])
    return sum(len(matcher.find(t)) for t in vault[1])


def test_many_titles_in_many_notes_is_linear_not_titles_times_notes() -> None:
    """Twice the notes and twice the titles: about twice the work (titles x notes
    regex scans would be four times)."""
    assert assert_linear(_vault, _find_all, 4000) == 3 * 8000
