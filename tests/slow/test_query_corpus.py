"""Every query command against a real vault from ../shared (skipped when absent), in a
fresh clone of a repository whose index branch was published by `kbase publish`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import CORPORA
from querykit import paths, published_corpus, query

CORPUS = "data-engineering-wiki"


@pytest.fixture(scope="module")
def wiki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return published_corpus(tmp_path_factory.mktemp("wiki"), CORPUS)


def _qa(kind: str) -> list[dict[str, str]]:
    rows = [json.loads(line) for line in
            (CORPORA / "qa" / f"{CORPUS}.jsonl").read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if r["kind"] == kind]


def test_aliases_find_their_note_first(wiki: Path) -> None:
    cases = _qa("alias")
    assert cases
    for case in cases[:10]:
        code, ans, _ = query(wiki, "search", case["query"], "--mode", "bm25", "--concise")
        assert code == 0 and ans["results"][0]["path"] in case["answers"], case


def test_question_titles_are_found(wiki: Path) -> None:
    found = 0
    cases = _qa("question-title")
    for case in cases:
        _, ans, _ = query(wiki, "search", case["query"], "--mode", "bm25", "--concise")
        found += any(p in case["answers"] for p in paths(ans["results"]))
    assert found >= len(cases) - 1


def test_read_links_backlinks_explore_status(wiki: Path) -> None:
    code, ans, _ = query(wiki, "status")
    assert code == 0 and ans["counts"]["notes"] > 100
    assert ans["source"]["origin"] == "remote-branch"
    code, ans, _ = query(wiki, "search", "data pipeline", "--mode", "bm25", "--snippets")
    top = ans["results"][0]["path"]
    code, ans, _ = query(wiki, "read", top)
    assert code == 0 and ans["path"] == top and ans["text"]
    code, links, _ = query(wiki, "links", top)
    assert code in (0, 1)
    for lk in links["links"]:
        assert (lk["path"] is None) == (lk["status"] != "ok")
    target = next(lk["path"] for lk in links["links"] if lk["path"] and lk["path"].endswith(".md"))
    code, back, _ = query(wiki, "backlinks", target)
    assert code == 0 and top in paths(back["backlinks"])
    code, ans, _ = query(wiki, "explore", top)
    assert code == 0 and ans["note"] == top
