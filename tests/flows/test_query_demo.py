"""Every query command against the demo vault, in a fresh clone of a repository whose
index branch was published by `kbase publish`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, run_kbase
from querykit import paths, published_demo, query


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return published_demo(tmp_path_factory.mktemp("demo"))


def test_clone_materialises_the_remote_branch_once(demo: Path) -> None:
    code, ans, err = query(demo, "status")
    assert code == 0, err
    assert ans["source"]["origin"] == "remote-branch"
    assert ans["source"]["location"] == "origin/kbase-index"
    folder = Path(ans["source"]["folder"])
    assert folder.parent == demo / ".git" / "kbase" / "index"
    assert ans["index"] == {"source_commit": git(demo, "rev-parse", "HEAD").strip(),
                            "built_at": ans["index"]["built_at"], "stale_count": 0,
                            "stale_notes": [],
                            "overlaid": False, "origin": "remote-branch"}
    assert not (demo / ".kbase").exists()  # nothing checked out into the work tree
    stamp = (folder / "manifest.json").stat().st_mtime_ns
    assert query(demo, "status")[0] == 0
    assert (folder / "manifest.json").stat().st_mtime_ns == stamp


def test_search_bm25_finds_notes_with_section_and_snippet(demo: Path) -> None:
    code, ans, _ = query(demo, "search", "package manager", "--mode", "bm25", "--snippets",
                         "--explain")
    assert code == 0
    top = ans["results"][0]
    assert top["path"] == "Getting Started.md"
    assert top["section"] == "Getting Started > Install > Linux"
    assert "package manager" in top["snippet"]
    assert top["explain"]["bm25"]["rank"] == 1


def test_search_by_alias_puts_that_note_first(demo: Path) -> None:
    code, ans, _ = query(demo, "search", "Wikilinks", "--mode", "bm25")
    assert code == 0 and ans["results"][0]["path"] == "Concepts/Linking.md"


def test_search_tag_filter_follows_hierarchy(demo: Path) -> None:
    code, ans, _ = query(demo, "search", "install", "--mode", "bm25", "--tag", "howto")
    assert code == 0
    assert paths(ans["results"]) == ["Getting Started.md"]
    code, ans, err = query(demo, "search", "install", "--mode", "bm25", "--tag", "HowTo")
    assert code == 0 and paths(ans["results"]) == ["Getting Started.md"]  # any case
    code, ans, err = query(demo, "search", "install", "--mode", "bm25", "--tag", "how")
    assert code == 2 and "no note has the tag #how; did you mean howto" in err


def test_search_without_results_exits_1(demo: Path) -> None:
    code, ans, _ = query(demo, "search", "xylophonequartz", "--mode", "bm25")
    assert (code, ans["results"]) == (1, [])


def test_hybrid_without_model_says_bm25_only(demo: Path) -> None:
    code, ans, _ = query(demo, "search", "links", "--concise")
    assert code == 0
    assert len(ans["notices"]) == 1, ans["notices"]
    assert ans["notices"][0].startswith("this index has no vectors (embedding model "
                                        "minishlab/potion-base-8M is not available offline")
    assert ans["notices"][0].endswith(": ranked by BM25 only")
    assert set(ans["results"][0]) == {"path", "title", "score", "confidence", "matched"}


def test_semantic_without_model_is_an_actionable_error(demo: Path) -> None:
    proc = run_kbase("search", "links", "--mode", "semantic", cwd=demo)
    assert proc.returncode == 2 and "--mode bm25" in proc.stderr


def test_read_whole_section_and_block(demo: Path) -> None:
    code, ans, _ = query(demo, "read", "Getting Started#Install")
    assert code == 0
    assert ans["text"].startswith("## Install") and "Homebrew" in ans["text"]
    assert "Configure" not in ans["text"]
    code, ans, _ = query(demo, "read", "Reference#^summary")
    assert ans["text"] == "The short version: every link resolves, or the hook says why. ^summary"
    code, ans, _ = query(demo, "read", "Front Page")  # an alias
    assert ans["path"] == "Home.md" and ans["start_line"] == 1


def test_read_expand_links(demo: Path) -> None:
    code, ans, _ = query(demo, "read", "Concepts/Linking.md", "--expand-links", "--depth", "2")
    assert code == 0
    got = {i["path"]: i["depth"] for i in ans["linked"]}
    assert got["Home.md"] == 1 and got["Reference.md"] == 1
    assert got["Getting Started.md"] == 2


def test_read_expand_links_packs_the_linked_notes_to_the_budget(demo: Path) -> None:
    from kbase_ci.query.payload import cost

    code, whole, _ = query(demo, "read", "Home", "--expand-links", "--depth", "2",
                           "--max-tokens", "0")
    assert code == 0 and all("lines" not in i for i in whole["linked"])  # all of each
    # room for the note asked for and a little more: not for every linked note whole
    budget = cost(json.dumps(dict(whole, linked=[]), separators=(",", ":"))) + 400
    proc = run_kbase("read", "Home", "--expand-links", "--depth", "2", "--max-tokens",
                     str(budget), "--format", "json", cwd=demo)
    assert proc.returncode == 0 and cost(proc.stdout.strip()) <= budget
    ans = json.loads(proc.stdout)
    assert ans["text"] == whole["text"]  # the note asked for, whole
    assert ans["linked"], ans  # sections of the linked notes, not 200 characters of one
    assert "truncated" not in ans  # packed to the budget, nothing left to cut
    partial = [i for i in ans["linked"] if "lines" in i]
    assert partial or ans.get("left_out")
    for item in partial:  # the text is the lines it names
        lines = (demo / item["path"]).read_text(encoding="utf-8").split("\n")
        ranges = [r.split("-") for r in item["lines"].split(", ")]
        assert item["text"] == "\n\n".join("\n".join(lines[int(a) - 1:int(b)])
                                            for a, b in ranges)


def test_unknown_note_suggests_a_name(demo: Path) -> None:
    proc = run_kbase("read", "Refrence", cwd=demo)
    assert proc.returncode == 2
    assert "no note named Refrence; did you mean Reference?" in proc.stderr


def test_links_with_sentence_and_unresolved_null(demo: Path) -> None:
    code, ans, _ = query(demo, "links", "Home")
    assert code == 0
    missing = [lk for lk in ans["links"] if lk["raw"] == "[[Missing Note]]"]
    assert missing and missing[0]["path"] is None and missing[0]["status"] == "unresolved"
    assert missing[0]["sentence"] == "[[Missing Note]] does not exist."
    first = ans["links"][0]
    assert first["path"] == "Reference.md" and first["line"] == 4
    # a URL is not a note to write: listed apart, never with `path: null`
    assert all(lk["status"] != "external" for lk in ans["links"])
    assert ans["external"] == [{"url": "https://example.com/#not-a-tag", "line": 20, "col": 29,
                                "raw": "[site](https://example.com/#not-a-tag)",
                                "embed": False, "sentence": ans["external"][0]["sentence"]}]
    assert "[site](https://example.com/#not-a-tag)" in ans["external"][0]["sentence"]


def test_backlinks_with_line_and_sentence(demo: Path) -> None:
    code, ans, _ = query(demo, "backlinks", "Home")
    assert code == 0
    got = {(b["path"], b["line"]): b["sentence"] for b in ans["backlinks"]}
    assert got[("Getting Started.md", 7)] == "Read [[Home]] first."
    assert "Home.md" not in {b["path"] for b in ans["backlinks"]}


def test_explore_lists_neighbours(demo: Path) -> None:
    code, ans, _ = query(demo, "explore", "Getting Started", "--concise")
    assert code == 0
    assert "Home.md" in ans["outlinks"] and "Home.md" in ans["backlinks"]
    assert ans["similar"] == []  # no model when the demo index was built: no vectors
    _, home, _ = query(demo, "explore", "Home", "--concise")
    assert home["external"] == ["https://example.com/#not-a-tag"]
    assert "[site](https://example.com/#not-a-tag)" not in home["unresolved"]
    _, full, _ = query(demo, "explore", "Home")
    assert [e["url"] for e in full["external"]] == ["https://example.com/#not-a-tag"]
    assert all(lk["status"] != "external" for lk in full["outlinks"])


def test_text_format(demo: Path) -> None:
    proc = run_kbase("backlinks", "Home", "--format", "text", cwd=demo)
    assert proc.returncode == 0
    assert "Getting Started.md:7  Read [[Home]] first." in proc.stdout.splitlines()


def test_links_text_says_why_a_link_has_no_path(demo: Path) -> None:
    proc = run_kbase("links", "Home", "--format", "text", cwd=demo)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert any(ln.startswith("20: (external) https://example.com/#not-a-tag")
               for ln in lines), lines
    assert any("(not yet written) [[Missing Note]]" in ln for ln in lines), lines
    assert not any("(not yet written) [site]" in ln for ln in lines)
