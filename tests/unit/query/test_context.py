"""`kbase context`: traversal, ranking, hub damping, the token budget and the answer's
bookkeeping, on real repositories (fixtures/context/vault and a generated hub vault)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from conftest import FIXTURES, git, run_kbase, write

from kbase_ci.parse.outline import sections
from kbase_ci.parse.parser import parse_note
from kbase_ci.query.budget import Piece, estimate_tokens, pack
from kbase_ci.query.bundle import ConciseContext, ContextAnswer, text_lines
from kbase_ci.query.context import context_answer
from kbase_ci.query.discovery import open_source
from kbase_ci.query.payload import cost
from kbase_ci.query.pieces import outline_note
from kbase_ci.query.view import QueryView
from kbase_ci.vault.notefiles import Vault

VAULT = FIXTURES / "context" / "vault"


def _files(folder: Path) -> dict[str, str | bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*.md"))}


def _view(root: Path, index: Path | None = None) -> QueryView:
    vault = Vault(root)
    return QueryView(vault, open_source(vault, index))


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(_files(VAULT))


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> QueryView:
    """One view of the fixture vault for the tests that only read it (a view is only
    read, and building its temporary index is most of a test's time)."""
    root = tmp_path_factory.mktemp("context") / "vault"
    write(root, _files(VAULT))
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "v")):
        git(root, *args)
    return _view(root)


def _text(answer: dict[str, Any]) -> str:
    """The text form exactly as `kbase context --format text` prints it."""
    concise = any("text" not in n for n in answer["notes"])
    typed = (ConciseContext if concise else ContextAnswer).from_json(answer)
    return "\n".join(text_lines(typed)) + "\n"


def bundle(view: QueryView, **kwargs: Any) -> dict[str, Any]:
    """The bundle as the text form budgets it (`--format text`)."""
    return context_answer(view, json_budget=False, **kwargs).to_json()


def _paths(answer: dict[str, Any]) -> list[str]:
    return [n["path"] for n in answer["notes"]]


# -- budget ------------------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["breadth", "importance", "tags"])
@pytest.mark.parametrize("depth", ["quick", "standard", "deep", 0, 4])
def test_budget_never_exceeded(view: QueryView, strategy: str, depth: str | int) -> None:
    for budget in (40, 120, 400, 1500, 8000):
        for start in ("Start", "Big", "Index"):
            ans = bundle(view, note=start, strategy=strategy, depth=depth,
                                 max_tokens=budget)
            assert ans["tokens"] <= budget
            assert estimate_tokens(_text(ans)) <= budget, (start, budget)
            if budget >= 1500:
                assert ans["notes"][0]["path"] == f"{start}.md"


def _ranges(note: dict[str, Any]) -> list[tuple[int, int]]:
    return [(int(a), int(b)) for a, _, b in
            (r.partition("-") for r in note["lines"].split(", ") if r)]


def test_the_text_is_the_lines_it_names(view: QueryView, repo: Path) -> None:
    ans = bundle(view, note="Big", depth="quick", max_tokens=1200)
    big = ans["notes"][0]
    assert big["path"] == "Big.md" and big["omitted"]
    lines = (repo / "Big.md").read_text().split("\n")
    parts = ["\n".join(lines[a - 1:b]) for a, b in _ranges(big)]
    assert big["text"] == "\n\n".join(parts)  # whole sections, the last cut at a paragraph
    roomy = bundle(view, note="Big", depth="quick", max_tokens=100000)
    assert roomy["notes"][0]["omitted"] == []
    assert roomy["notes"][0]["lines"] == f"1-{len(lines) - 1}"  # one range: all of it


def test_pack_takes_the_highest_priority_first() -> None:
    notes = [[Piece(0, 50, 0.2), Piece(1, 50, 0.9)], [Piece(0, 500, 1.0), Piece(1, 10, 0.1)],
             [Piece(0, 30, 0.5)]]
    chosen, used, skipped = pack(notes, [5, 5, 5], 200)
    # 0/1 (0.9), 2/0 (0.5), 0/0 (0.2), 1/1 (0.1); 1/0 (1.0) never fits
    assert chosen == [[0, 1], [1], [0]] and used == 50 + 50 + 30 + 10 + 15
    assert skipped == [(1, 0)]
    chosen, used, skipped = pack(notes, [5, 5, 5], 700)
    assert chosen == [[0, 1], [0, 1], [0]] and skipped == [] and used <= 700


def _guide(make_repo: Callable[..., Path]) -> QueryView:
    filler = " ".join(f"plain filler sentence number {i}." for i in range(60))
    return _view(make_repo({
        "Guide.md": ("# Guide\n\nAn overview of the service.\n\n## Install\n\n" + filler
                     + "\n\n## Caching\n\nThe cache evicts the least recently used entry; "
                     "eviction runs when the cache is full.\n\n## Logging\n\n" + filler
                     + "\n\n## Related\n\nSee [[Store]] for where entries live.\n"),
        "Store.md": ("# Store\n\n## Layout\n\n" + filler + "\n\n## Used by\n\n"
                     "The [[Guide]] service reads it.\n"),
    }))


def test_sections_ranked_by_the_query(make_repo: Callable[..., Path]) -> None:
    view = _guide(make_repo)
    ans = bundle(view, query="cache eviction", depth=0, max_tokens=260)
    guide = ans["notes"][0]
    assert guide["path"] == "Guide.md"
    assert "least recently used" in guide["text"]  # not document order: Install is first
    assert "Install" in guide["omitted"] and "filler" not in guide["text"]


def test_sections_ranked_by_link_role(make_repo: Callable[..., Path]) -> None:
    view = _guide(make_repo)
    ans = bundle(view, note="Guide", depth="quick", max_tokens=300)
    by_path = {n["path"]: n for n in ans["notes"]}
    # the sections holding the link that joins the two notes come first
    assert "See [[Store]]" in by_path["Guide.md"]["text"]
    assert "The [[Guide]] service" in by_path["Store.md"]["text"]
    assert "filler" not in by_path["Store.md"]["text"]


def test_estimator_errs_high_on_hard_text() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("the cat sat on the mat") >= 6
    cjk = "知识库中的笔记通过链接互相连接" * 4
    assert estimate_tokens(cjk) >= len(cjk)  # CJK is about one token a character or more
    sha = "4b6d6bc" * 10
    assert estimate_tokens(sha) >= len(sha) // 3
    camel = "getContextAnswerFromQueryView"
    assert estimate_tokens(camel) >= 6


def test_sections_from_the_index_match_a_full_parse(make_repo: Callable[..., Path]) -> None:
    files = _files(FIXTURES / "demo-vault")
    files.update(_files(VAULT))
    files["Front.md"] = ("---\ntitle: x\n---\nIntro.\n\n# A\n\n## B\n\ntext\n\n### C\n\n"
                         "# D\nSetext\n------\n\nbody\n")
    root = make_repo(files)
    index = root / "idx"
    assert run_kbase("index", "--out", str(index), cwd=root).returncode == 0
    view = _view(root, index)
    for path in view.notes:
        text = view.text(path)
        assert sections(outline_note(view, path, text), text) == sections(
            parse_note(path, text.encode()), text), path


# -- traversal ---------------------------------------------------------------------------

def _graph(view: QueryView) -> nx.Graph:
    edges = view.edges
    g = nx.Graph()
    g.add_nodes_from(edges.paths)
    g.add_edges_from((edges.paths[a], edges.paths[b]) for a, b in edges.pairs)
    return g


@pytest.mark.parametrize("strategy", ["breadth", "importance"])
def test_cycles_deduplicated_and_depth_is_link_distance(view: QueryView,
                                                        strategy: str) -> None:
    g = _graph(view)
    ans = bundle(view, note="Start", strategy=strategy, depth="deep",
                         max_tokens=100000)
    got = _paths(ans)
    assert len(got) == len(set(got))
    hops = nx.single_source_shortest_path_length(g, "Start.md")
    for n in ans["notes"]:
        assert n["depth"] == hops[n["path"]], n["path"]


def test_breadth_lists_nearer_notes_first(view: QueryView) -> None:
    ans = bundle(view, note="Start", depth="deep", max_tokens=100000)
    depths = [n["depth"] for n in ans["notes"]]
    assert depths == sorted(depths)
    assert set(_paths(ans)) >= {"Alpha.md", "Beta.md", "Index.md", "Gamma.md", "Delta.md"}


def test_why_names_a_note_of_the_bundle(view: QueryView) -> None:
    for kwargs in ({"note": "Start"}, {"note": "Delta", "depth": "deep"},
                   {"note": "Start", "strategy": "tags", "follow_tags": ["deep"]},
                   {"query": "lighthouse keepers"}, {"note": "Big", "max_tokens": 300}):
        ans = bundle(view, **kwargs)
        notes = {n["path"]: n for n in ans["notes"]}
        order = _paths(ans)
        for n in notes.values():
            if n["depth"] == 0:
                assert n["why"] in ("the note asked for", ) or n["why"].startswith("search hit")
                continue
            parent = n["why"].split(" (+")[0].rsplit(" ", 1)[-1]
            assert order.index(parent) < order.index(n["path"]), n
            assert notes[parent]["depth"] == n["depth"] - 1
        assert not set(ans["left_out"]) & set(notes)


def test_hub_damping_keeps_the_bundle_focused(make_repo: Callable[..., Path]) -> None:
    files: dict[str, str | bytes] = {
        "Index.md": "# Index\n\n" + "".join(f"- [[Topic {i:03d}]]\n" for i in range(200)),
        "Focus.md": "# Focus\n\nSee [[Index]], [[Near A]] and [[Near B]].\n",
        "Near A.md": "# Near A\n\nNear A leads to [[Deep A]].\n",
        "Near B.md": "# Near B\n\nNear B leads to [[Deep B]].\n",
        "Deep A.md": "# Deep A\n\nDeep A is what Focus needs next.\n",
        "Deep B.md": "# Deep B\n\nDeep B too.\n",
    }
    for i in range(200):
        files[f"Catalog/Topic {i:03d}.md"] = f"# Topic {i:03d}\n\nTopic number {i}.\n"
    view = _view(make_repo(files))
    ans = bundle(view, note="Focus", depth="standard")
    got = _paths(ans)
    assert {"Deep A.md", "Deep B.md"} <= set(got)
    topics = [p for p in got if p.startswith("Catalog/")]  # sorts before Deep
    assert len(topics) <= 1 and len(got) <= 7
    for strategy in ("importance", "tags"):
        alt = _paths(bundle(view, note="Focus", strategy=strategy))
        assert {"Deep A.md", "Deep B.md"} <= set(alt)
    hub = bundle(view, note="Index", depth="deep", max_tokens=2000)
    assert len(hub["notes"]) <= 20 and hub["tokens"] <= 2000


def test_follow_tags_brings_in_unlinked_notes(view: QueryView) -> None:
    plain = _paths(bundle(view, note="Gamma", depth="quick"))
    assert "Island.md" not in plain
    ans = bundle(view, note="Gamma", strategy="tags")
    island = next(n for n in ans["notes"] if n["path"] == "Island.md")
    assert island["why"].startswith("shares #deep with")
    assert ans["followed_tags"] == ["deep"]


def test_unknown_follow_tag_is_a_usage_error(repo: Path) -> None:
    # it exited 0 with a bundle that silently followed nothing
    proc = run_kbase("context", "Gamma", "--strategy", "tags", "--follow-tags", "deeep",
                     cwd=repo)
    assert proc.returncode == 2 and "no note has the tag #deeep" in proc.stderr
    assert "did you mean deep" in proc.stderr
    proc = run_kbase("context", "Gamma", "--follow-tags", "#Deep", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["followed_tags"] == ["deep"]


def test_query_seeds_are_search_hits(view: QueryView) -> None:
    ans = bundle(view, query="lighthouse keepers", depth="quick")
    first = ans["notes"][0]
    assert first["path"] == "Beta.md" and first["why"] == "search hit #1"
    assert bundle(view, query="zzqxv nothing like this")["notes"] == []


def test_fresh_edit_link_followed_without_rebuild(repo: Path) -> None:
    proc = run_kbase("index", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    index = repo / ".kbase"
    before = _paths(bundle(_view(repo, index), note="Alpha", depth=1,
                                   max_tokens=100000))
    assert "Far Leaf.md" not in before
    text = (repo / "Alpha.md").read_text()
    write(repo, {"Alpha.md": text.replace("[[Gamma]]", "[[Gamma]] and [[Far Leaf]]")})
    ans = bundle(_view(repo, index), note="Alpha", depth="standard",
                         max_tokens=100000)
    far = next(n for n in ans["notes"] if n["path"] == "Far Leaf.md")
    assert far["depth"] == 1 and far["why"] == "linked from Alpha.md"
    assert ans["index"]["stale_notes"] == ["Alpha.md"]
    for budget in ("150", "400"):  # the text form's "index is older" line is budgeted too
        proc = run_kbase("context", "Alpha", "--format", "text", "--max-tokens", budget,
                         "--index", str(index), cwd=repo)
        assert proc.returncode == 0 and "changed since" in proc.stdout, proc.stderr
        assert estimate_tokens(proc.stdout) <= int(budget)


# -- the command ---------------------------------------------------------------------------

def test_exit_codes(repo: Path) -> None:
    ok = run_kbase("context", "Start", cwd=repo)
    assert ok.returncode == 0, ok.stderr
    assert _paths(json.loads(ok.stdout))[0] == "Start.md"
    missing = run_kbase("context", "Strat", cwd=repo)
    assert missing.returncode == 2 and "did you mean Start" in missing.stderr
    whole = run_kbase("context", "Start", "--max-tokens", "0", cwd=repo)  # 0: no limit
    assert whole.returncode == 0 and json.loads(whole.stdout)["max_tokens"] == 1_000_000
    nothing = run_kbase("context", "--query", "zzqxv nothing like this", cwd=repo)
    assert nothing.returncode == 1 and json.loads(nothing.stdout)["notes"] == []
    for bad in (("context",), ("context", "Start", "--query", "x"),
                ("context", "Start", "--depth", "banana"),
                ("context", "Start", "--max-tokens", "-1"),
                ("context", "Start", "--strategy", "random")):
        proc = run_kbase(*bad, cwd=repo)
        assert proc.returncode == 2, (bad, proc.stdout, proc.stderr)
        assert proc.stderr.strip()


def test_text_form(repo: Path) -> None:
    proc = run_kbase("context", "Start", "--format", "text", "--max-tokens", "3000",
                     cwd=repo)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("context: 7 notes, ")
    seps = [ln for ln in lines if ln.startswith("==== ")]
    assert len(seps) == 7
    assert seps[0] == "==== Start.md (depth 0; the note asked for) ===="
    assert "==== Alpha.md (depth 1; linked with Start.md) ====" in seps
    assert all(("linked" in s or "links to" in s) for s in seps[1:])
    assert estimate_tokens(proc.stdout) <= 3000
    assert _text(bundle(_view(repo), note="Start", max_tokens=3000)) == proc.stdout


# -- the JSON an agent pays for -------------------------------------------------------------

@pytest.mark.parametrize("budget", [400, 1500, 3000, 8000])
def test_json_answers_stay_within_max_tokens(repo: Path, budget: int) -> None:
    for args in (["Start"], ["Big", "--depth", "deep"], ["--query", "lighthouse keepers"]):
        proc = run_kbase("context", *args, "--max-tokens", str(budget), cwd=repo)
        if proc.returncode == 2:  # not even an empty bundle's envelope fits: say so
            assert budget < 500 and "raise it" in proc.stderr, proc.stderr
            continue
        assert proc.returncode in (0, 1), proc.stderr
        text = proc.stdout.rstrip("\n")
        assert cost(text) <= budget and len(text) / 4 <= budget, (args, budget)
        assert "\n" not in text  # compact unless --pretty or a terminal
        ans = json.loads(text)
        if budget >= 1500:
            assert ans["notes"], (args, budget)
        if budget == 8000 and args == ["Start"]:
            assert "truncated" not in ans  # roomy: nothing cut
    pretty = run_kbase("context", "Start", "--max-tokens", "1500", "--pretty", cwd=repo)
    assert pretty.stdout.startswith("{\n  ") and cost(pretty.stdout) <= 1500


def test_concise_context_lists_what_to_read(repo: Path) -> None:
    proc = run_kbase("context", "Start", "--concise", cwd=repo)
    ans = json.loads(proc.stdout)
    assert set(ans) == {"note", "notes", "tokens", "max_tokens", "left_out", "link_traversal",
                        "metadata", "index"}
    assert ans["notes"][0]["path"] == "Start.md" and "text" not in ans["notes"][0]
    assert all(n["lines"] for n in ans["notes"])
    full = json.loads(run_kbase("context", "Start", cwd=repo).stdout)
    assert [n["path"] for n in ans["notes"]] == [n["path"] for n in full["notes"]]
    assert len(proc.stdout) < len(json.dumps(full)) / 2


# -- the traversal metadata (issue 39) -------------------------------------------------------

def _counts_agree(ans: dict[str, Any]) -> None:
    """`link_traversal` and `metadata` as the knowledge-bank schema names them, and their
    counts consistent with the notes listed."""
    walk, meta = ans["link_traversal"], ans["metadata"]
    assert set(walk) == {"total_links_found", "links_followed", "max_depth_reached",
                         "traversal_strategy", "traversal_path"}
    assert set(meta) == {"documents_analyzed", "primary_documents", "linked_documents",
                         "analysis_depth", "limitations"}
    assert sum(walk["traversal_path"]) == meta["documents_analyzed"]
    assert walk["max_depth_reached"] == len(walk["traversal_path"]) - 1
    assert walk["links_followed"] >= walk["total_links_found"] > 0


def test_every_bundle_says_how_it_was_walked(repo: Path) -> None:
    ans = json.loads(run_kbase("context", "Start", "--depth", "deep", cwd=repo).stdout)
    _counts_agree(ans)
    seeds = sum(1 for n in ans["notes"] if n["depth"] == 0)
    assert ans["metadata"]["primary_documents"] == seeds == 1
    assert ans["metadata"]["linked_documents"] == len(ans["notes"]) - 1
    assert ans["metadata"]["analysis_depth"] == "deep"
    assert ans["link_traversal"]["traversal_strategy"] == "breadth"
    # counts, not lists of paths: a few per cent of the answer at the default budget
    said = cost(json.dumps({"link_traversal": ans["link_traversal"],
                            "metadata": ans["metadata"]}, separators=(",", ":")))
    assert cost(json.dumps(ans, separators=(",", ":"))) > 2400
    assert said <= 0.05 * cost(json.dumps(ans, separators=(",", ":"))), said
    concise = json.loads(run_kbase("context", "Start", "--depth", "deep", "--concise",
                                   cwd=repo).stdout)
    assert concise["metadata"] == ans["metadata"]


def test_limitations_say_what_the_budget_left_out(repo: Path) -> None:
    ans = json.loads(run_kbase("context", "Big", "--depth", "deep", "--max-tokens", "900",
                               cwd=repo).stdout)
    _counts_agree(ans)
    said = ans["metadata"]["limitations"]
    assert ans["left_out"] and f"{len(ans['left_out'])} notes reached: left_out" in said
    assert any(s.endswith("sections: omitted") for s in said), said
    roomy = json.loads(run_kbase("context", "Alpha", "--depth", "quick", "--max-tokens", "0",
                                 cwd=repo).stdout)
    unlisted = roomy["metadata"]["documents_analyzed"] - len(roomy["notes"])
    assert roomy["left_out"] == [] and unlisted > 0  # the preset's cap, not the budget
    assert roomy["metadata"]["limitations"] == [
        f"{unlisted} notes reached past quick's 3: not listed"]
