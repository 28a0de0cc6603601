"""`kbase notes` and `kbase tags` on fixtures/graph/vault: tag hierarchy (`coffee` holds
`coffee/brewing`), intersection vs `--any`, case-insensitive tags, domains, counts per
tag and per branch, co-occurrence, exit codes and the work-tree overlay."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from conftest import run_kbase, write
from graphkit import make_vault
from querykit import query

from kbase_ci.query.discovery import open_source
from kbase_ci.query.tagtree import notes_answer, tag_matches, tags_answer
from kbase_ci.query.view import QueryView
from kbase_ci.vault.notefiles import Vault

# Hand-read from the fixture: each note's tags (frontmatter and inline).
TAGS = {
    "Coffee Grounds.md": {"garden/soil", "coffee"},
    "Coffee/Coffee.md": {"coffee"},
    "Coffee/Espresso.md": {"coffee/brewing"},
    "Coffee/Grinders.md": {"coffee/brewing", "Coffee/Gear"},
    "Coffee/Milk Steaming.md": {"coffee/brewing", "status/draft"},
    "Coffee/Roasting.md": {"coffee/beans"},
    "Drafts/Scratch.md": {"status/draft"},
    "Garden/Compost.md": {"garden/soil"},
    "Garden/Garden.md": {"garden"},
    "Garden/Seeds.md": {"garden/vegetables"},
    "Garden/Tomatoes.md": {"garden/vegetables", "status/draft"},
    "Garden/Watering.md": {"garden"},
    "Index Page.md": {"meta"},
    'Say "Cheese" [v2].md': {"meta"},
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_vault(tmp_path_factory.mktemp("tags") / "vault")


@pytest.fixture(scope="module")
def view(repo: Path) -> QueryView:
    vault = Vault(repo)
    return QueryView(vault, open_source(vault, None))


def paths(answer: dict[str, Any]) -> list[str]:
    return [n["path"] for n in answer["notes"]]


def test_fixture_tags_as_hand_read(view: QueryView) -> None:
    assert {p: set(i.tags) for p, i in view.notes.items() if i.tags} == TAGS


def test_tag_matches_hierarchy_and_case() -> None:
    assert tag_matches(("coffee/brewing",), "coffee")
    assert tag_matches(("Coffee/Gear",), "#coffee/gear")
    assert not tag_matches(("coffeehouse",), "coffee")
    assert not tag_matches(("coffee",), "coffee/brewing")


def test_notes_intersection_any_and_domain(view: QueryView) -> None:
    coffee = notes_answer(view, tags=["coffee"]).to_json()
    assert paths(coffee) == sorted(p for p, t in TAGS.items()
                                   if any(x.lower().split("/")[0] == "coffee" for x in t))
    assert "Coffee/Grinders.md" in paths(coffee)  # via Coffee/Gear and coffee/brewing
    both = notes_answer(view, tags=["garden", "status"]).to_json()
    assert paths(both) == ["Garden/Tomatoes.md"] and both["match"] == "all"
    either = notes_answer(view, tags=["garden/vegetables", "#meta"], any_tag=True).to_json()
    assert paths(either) == ["Garden/Seeds.md", "Garden/Tomatoes.md", "Index Page.md",
                             'Say "Cheese" [v2].md']
    assert either["tags"] == ["garden/vegetables", "meta"] and either["match"] == "any"
    dom = notes_answer(view, tags=["status/draft"], domain="Coffee").to_json()
    assert paths(dom) == ["Coffee/Milk Steaming.md"]
    assert paths(notes_answer(view, domain="Drafts").to_json()) == ["Drafts/Scratch.md"]
    assert len(paths(notes_answer(view).to_json())) == len(view.notes)
    assert notes_answer(view, tags=["coffee/gear", "garden"]).to_json()["notes"] == []


def test_tag_counts_per_tag_and_branch(view: QueryView) -> None:
    ans = tags_answer(view).to_json()
    assert ans["notes"] == len(view.notes) and ans["tagged"] == len(TAGS)
    got = {t["tag"]: (t["count"], t["total"]) for t in ans["tags"]}
    exact = Counter(t.casefold() for ts in TAGS.values() for t in ts)
    for tag, (count, total) in got.items():
        k = tag.casefold()
        assert count == exact[k]
        assert total == sum(1 for ts in TAGS.values()
                            if any(t.casefold() == k or t.casefold().startswith(k + "/")
                                   for t in ts))
    assert got["coffee"] == (2, 6) and got["status"] == (0, 3)
    assert got["Coffee/Gear"] == (1, 1) and "coffee/gear" not in got
    assert set(got) == {"coffee", "coffee/beans", "coffee/brewing", "Coffee/Gear", "garden",
                        "garden/soil", "garden/vegetables", "meta", "status", "status/draft"}
    totals = [(t["total"], t["count"]) for t in ans["tags"]]
    assert totals == sorted(totals, reverse=True)


def test_tag_tree(view: QueryView) -> None:
    tree = tags_answer(view, tree=True).to_json()["tree"]
    assert [n["tag"] for n in tree] == ["coffee", "garden", "meta", "status"]
    coffee = tree[0]
    assert [(c["name"], c["tag"], c["count"]) for c in coffee["children"]] == [
        ("beans", "coffee/beans", 1), ("brewing", "coffee/brewing", 3),
        ("Gear", "Coffee/Gear", 1)]
    assert tree[3] == {"name": "status", "tag": "status", "count": 0, "total": 3,
                       "children": [{"name": "draft", "tag": "status/draft", "count": 3,
                                     "total": 3, "children": []}]}


def test_cooccurrence(view: QueryView) -> None:
    pairs = tags_answer(view, stats=True, limit=0).to_json()["cooccurrence"]
    want: Counter[tuple[str, str]] = Counter()
    for ts in TAGS.values():
        want.update(combinations(sorted(t.casefold() for t in ts), 2))
    assert {(p["a"].casefold(), p["b"].casefold()): p["count"] for p in pairs} == want
    spb = next(p for p in pairs if {p["a"], p["b"]} == {"coffee/brewing", "status/draft"})
    assert spb["jaccard"] == round(1 / (3 + 3 - 1), 4)
    assert len(tags_answer(view, stats=True, limit=2).to_json()["cooccurrence"]) == 2


def test_commands_exit_codes_text_and_overlay(repo: Path, tmp_path: Path) -> None:
    code, ans, _ = query(repo, "notes", "--tag", "coffee", "--tag", "status")
    assert code == 0 and paths(ans) == ["Coffee/Milk Steaming.md"]
    assert ans["index"]["origin"] == "temporary"
    code, ans, err = query(repo, "notes", "--tag", "nope")
    assert code == 2 and "no note has the tag #nope" in err
    code, ans, _ = query(repo, "tags", "--tree", "--stats")
    assert code == 0 and "tree" in ans and "cooccurrence" in ans and "index" in ans
    assert query(repo, "tags", "--limit", "-1")[0] == 2
    proc = run_kbase("tags", "--tree", "--format", "text", cwd=repo)
    assert proc.stdout.splitlines()[:4] == ["coffee  6 (2 exact)", "  beans  1",
                                            "  brewing  3", "  Gear  1"]
    proc = run_kbase("notes", "--tag", "meta", "--format", "text", cwd=repo)
    assert proc.stdout.splitlines() == ["Index Page.md  #meta", 'Say "Cheese" [v2].md  #meta']
    fresh = make_vault(tmp_path / "fresh")
    write(fresh, {".gitignore": ".kbase/\n"})
    assert run_kbase("index", cwd=fresh).returncode == 0
    write(fresh, {"Lonely.md": "# Lonely\n\nNow tagged. #meta/new\n"})
    code, ans, _ = query(fresh, "notes", "--tag", "meta")
    assert paths(ans) == ["Index Page.md", "Lonely.md", 'Say "Cheese" [v2].md']
    code, ans, _ = query(fresh, "tags")
    assert {"tag": "meta/new", "count": 1, "total": 1} in ans["tags"]
    assert ans["index"]["stale_notes"] == ["Lonely.md"]
    assert ans["index"]["origin"] == "worktree"
    untagged = make_vault(tmp_path / "untagged")
    for p in TAGS:
        write(untagged, {p: "# Plain\n"})
    assert query(untagged, "tags")[0] == 1
