"""`kbase graph`: answers checked against networkx (paths, degrees, neighbourhoods,
communities) on fixtures/graph/vault and on seeded random graphs, orphans against a
hand-checked list and the PR report's definition, the work-tree overlay, and the
Mermaid/DOT pictures."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from conftest import run_kbase, write
from graphkit import DOT_STR, check_dot, check_mermaid, make_vault
from querykit import query

from kbase_ci.errors import UsageError
from kbase_ci.query.clusters import louvain
from kbase_ci.query.discovery import open_source
from kbase_ci.query.graph import NoteGraph
from kbase_ci.query.graphanswer import graph_answer
from kbase_ci.query.graphdraw import dot, dot_string, mermaid, mermaid_label
from kbase_ci.query.notetable import NoteEdges
from kbase_ci.query.view import QueryView
from kbase_ci.vault.linkgraph import link_graph
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.scanner import scan

ISOLATED = ["Drafts/Scratch.md", "Gallery.md", "Lonely.md", "Self Ref.md", "Wishlist.md"]
LINK_OUT_ONLY = ["Index Page.md", 'Say "Cheese" [v2].md']
GARDEN = {"Garden/Compost.md", "Garden/Garden.md", "Garden/Seeds.md", "Garden/Tomatoes.md",
          "Garden/Watering.md"}
COFFEE = {"Coffee/Coffee.md", "Coffee/Espresso.md", "Coffee/Grinders.md",
          "Coffee/Milk Steaming.md", "Coffee/Roasting.md"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_vault(tmp_path_factory.mktemp("graph") / "vault")


@pytest.fixture(scope="module")
def view(repo: Path) -> QueryView:
    vault = Vault(repo)
    return QueryView(vault, open_source(vault, None))


@pytest.fixture(scope="module")
def truth(repo: Path) -> nx.DiGraph:
    """The link graph as the checks and the PR report see it (graphstats, resolved from
    fresh parses), not from the index the answers read."""
    vault = Vault(repo)
    lg = link_graph(scan(vault)[0], vault.files)
    g = nx.DiGraph()
    g.add_nodes_from(lg.notes)
    g.add_edges_from((a, b) for a, outs in lg.outgoing.items() for b in outs)
    return g


def edge_set(answer: dict[str, Any]) -> set[tuple[str, str]]:
    return {(e["source"], e["target"]) for e in answer["edges"]}


def test_edges_are_the_check_graph(view: QueryView, truth: nx.DiGraph) -> None:
    e = view.edges
    assert list(e.paths) == sorted(truth.nodes)
    assert {(e.paths[a], e.paths[b]) for a, b in e.pairs} == set(truth.edges)
    assert ("Coffee Grounds.md", "Garden/Compost.md") in truth.edges  # the bridge
    assert truth.number_of_edges() > 25


def test_shortest_path_lengths_match_networkx(view: QueryView, truth: nx.DiGraph) -> None:
    for directed, g in ((False, truth.to_undirected()), (True, truth)):
        want = dict(nx.all_pairs_shortest_path_length(g))
        for a in sorted(truth.nodes):
            for b in sorted(truth.nodes):
                ans = graph_answer(view, "path", source=a, target=b, directed=directed).to_json()
                assert ans["length"] == want[a].get(b), (a, b, directed)
                if ans["paths"]:
                    p = ans["paths"][0]
                    assert p[0] == a and p[-1] == b and len(p) == ans["length"] + 1
                    assert all(g.has_edge(u, v) for u, v in pairwise(p))


def test_all_shortest_paths_match_networkx(view: QueryView, truth: nx.DiGraph) -> None:
    und = truth.to_undirected()
    for a, b in (("Garden/Tomatoes.md", "Coffee/Espresso.md"),
                 ("Garden/Watering.md", "Coffee/Milk Steaming.md"),
                 ("Index Page.md", "Coffee Grounds.md")):
        ans = graph_answer(view, "path", source=a, target=b, all_paths=True, limit=100).to_json()
        assert ans["paths"] == sorted(nx.all_shortest_paths(und, a, b))
        assert ans["paths"] and not ans["truncated"]
        on = {n for p in ans["paths"] for n in p}
        assert {n["path"] for n in ans["nodes"]} == on
        assert edge_set(ans) == {(u, v) for u, v in truth.subgraph(on).edges
                                 if any((u, v) in pairwise(p) or (v, u) in pairwise(p)
                                        for p in ans["paths"])}
    one = graph_answer(view, "path", source="Tomatoes", target="Espresso", all_paths=True,
                       limit=1).to_json()
    assert len(one["paths"]) == 1 and one["truncated"]


def test_degrees_and_hubs_match_networkx(view: QueryView, truth: nx.DiGraph) -> None:
    ans = graph_answer(view, "hubs", min_links=0, limit=0).to_json()
    assert len(ans["nodes"]) == truth.number_of_nodes() == ans["total"]
    for n in ans["nodes"]:
        p = n["path"]
        assert (n["incoming"], n["outgoing"], n["degree"]) == (
            truth.in_degree(p), truth.out_degree(p), truth.degree(p))
    assert [n["path"] for n in ans["nodes"]] == sorted(
        truth.nodes, key=lambda p: (-truth.degree(p), p))
    top = graph_answer(view, "hubs", min_links=7, limit=2).to_json()
    # Espresso has 8 links; four notes have 7, the tie goes by path
    assert [n["path"] for n in top["nodes"]] == ["Coffee/Espresso.md", "Coffee/Coffee.md"]
    assert top["total"] == 5 == sum(1 for p in truth.nodes if truth.degree(p) >= 7)
    assert edge_set(top) == {("Coffee/Coffee.md", "Coffee/Espresso.md"),
                             ("Coffee/Espresso.md", "Coffee/Coffee.md")}


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_neighbourhood_matches_networkx(view: QueryView, truth: nx.DiGraph,
                                        depth: int) -> None:
    for note, directed in (("Coffee/Espresso.md", False), ("Garden/Compost.md", True)):
        g = truth if directed else truth.to_undirected()
        want = nx.single_source_shortest_path_length(g, note, cutoff=depth)
        ans = graph_answer(view, "neighborhood", note=note, depth=depth,
                           directed=directed).to_json()
        assert {n["path"]: n["depth"] for n in ans["nodes"]} == want
        assert [n["depth"] for n in ans["nodes"]] == sorted(want.values())
        assert edge_set(ans) == set(truth.subgraph(want).edges)
    capped = graph_answer(view, "neighborhood", note="Espresso", depth=3, limit=3).to_json()
    assert len(capped["nodes"]) == 3 and capped["truncated"]
    assert capped["nodes"][0]["path"] == "Coffee/Espresso.md"


def test_orphans_hand_checked_and_as_the_pr_report_counts(view: QueryView,
                                                          repo: Path) -> None:
    ans = graph_answer(view, "orphans").to_json()
    assert [n["path"] for n in ans["nodes"]] == ISOLATED
    assert all(n["isolated"] and n["outgoing"] == 0 for n in ans["nodes"])
    assert ans["edges"] == []
    every = graph_answer(view, "orphans", no_backlinks=True).to_json()
    assert [n["path"] for n in every["nodes"]] == sorted(ISOLATED + LINK_OUT_ONLY)
    vault = Vault(repo)
    report = link_graph(scan(vault)[0], vault.files).orphans()
    assert [o.to_json() for o in report] == [
        {k: n[k] for k in ("path", "isolated", "outgoing")} for n in every["nodes"]]


def _modularity(n: int, pairs: list[tuple[int, int]], com: list[int]) -> float:
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(pairs)
    groups: dict[int, set[int]] = {}
    for node, c in enumerate(com):
        groups.setdefault(c, set()).add(node)
    return float(nx.community.modularity(g, groups.values()))


def _best_networkx(n: int, pairs: list[tuple[int, int]]) -> float:
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(pairs)
    return max(float(nx.community.modularity(g, nx.community.louvain_communities(g, seed=s)))
               for s in range(5))


def test_clusters_on_the_fixture(view: QueryView, truth: nx.DiGraph) -> None:
    ans = graph_answer(view, "clusters", min_size=3).to_json()
    members = [set(c["members"]) for c in ans["clusters"]]
    assert len(members) == 2
    assert any(m >= GARDEN for m in members) and any(m >= COFFEE for m in members)
    assert not any(GARDEN & m and COFFEE & m for m in members)
    components = [set(c) for c in nx.weakly_connected_components(truth)]
    for c, m in zip(ans["clusters"], members, strict=True):
        assert any(m <= comp for comp in components)
        assert c["size"] == len(m) and c["central"] in m and c["terms"]
    garden = next(c for c in ans["clusters"] if set(c["members"]) >= GARDEN)
    assert garden["central"] == "Garden/Compost.md"
    assert {"compost", "garden"} <= set(garden["terms"])
    assert {n["path"]: n["cluster"] for n in ans["nodes"]} == {
        p: c["id"] for c in ans["clusters"] for p in c["members"]}
    assert graph_answer(view, "clusters", min_size=8).to_json()["clusters"] == []


def test_louvain_against_networkx_on_random_graphs() -> None:
    for seed in range(4):
        g = nx.planted_partition_graph(5, 20, 0.35, 0.03, seed=seed, directed=True)
        pairs = sorted(g.edges)
        com = louvain(g.number_of_nodes(), pairs)
        assert com == louvain(g.number_of_nodes(), pairs)  # deterministic
        ours = _modularity(g.number_of_nodes(), pairs, com)
        assert ours >= 0.95 * _best_networkx(g.number_of_nodes(), pairs)
        # no community spans two components: a node only joins a neighbour's
        comp = {n: i for i, c in enumerate(nx.weakly_connected_components(g)) for n in c}
        for node, c in enumerate(com):
            assert comp[node] == comp[c]


def test_paths_and_degrees_on_a_random_digraph() -> None:
    g = nx.gnp_random_graph(60, 0.04, seed=7, directed=True)
    g.remove_edges_from(nx.selfloop_edges(g))
    paths = tuple(f"n{i:03}.md" for i in range(60))
    graph = NoteGraph(NoteEdges(paths, tuple(sorted(g.edges))))
    und = g.to_undirected()
    for directed, ref in ((True, g), (False, und)):
        want = dict(nx.all_pairs_shortest_path_length(ref))
        for a in range(60):
            for b in range(0, 60, 7):
                found = graph.shortest_paths(a, b, directed=directed, limit=50)
                assert found.length == want[a].get(b)
                if found.length is not None and not found.truncated:
                    assert list(found.paths) == sorted(
                        tuple(p) for p in nx.all_shortest_paths(ref, a, b))
    for i in range(60):
        d = graph.degree(i)
        assert (d.incoming, d.outgoing) == (g.in_degree(i), g.out_degree(i))
    assert [o.path for o in graph.orphans(no_backlinks=True)] == [
        paths[i] for i in range(60) if g.in_degree(i) == 0]


def test_unknown_note_and_action_are_usage_errors(view: QueryView) -> None:
    with pytest.raises(UsageError, match="did you mean"):
        graph_answer(view, "path", source="Tomatos", target="Espresso").to_json()
    with pytest.raises(UsageError, match="unknown graph action"):
        graph_answer(view, "centrality").to_json()
    with pytest.raises(UsageError, match="--depth"):
        graph_answer(view, "neighborhood", note="Espresso", depth=-1).to_json()


# -- the command ----------------------------------------------------------------------
def test_cli_exit_codes_and_json(repo: Path) -> None:
    code, ans, _ = query(repo, "graph", "path", "Lonely", "Espresso")
    assert code == 1 and ans["length"] is None and ans["paths"] == []
    code, ans, _ = query(repo, "graph", "path", "Tomatoes", "Espresso")
    assert code == 0 and ans["length"] == 4 and ans["action"] == "path"
    assert ans["index"]["origin"] == "temporary"
    code, ans, err = query(repo, "graph", "neighborhood", "Espreso")
    assert code == 2 and "did you mean Espresso" in err
    code, ans, _ = query(repo, "graph", "neighbourhood", "Lonely")
    assert code == 1 and [n["path"] for n in ans["nodes"]] == ["Lonely.md"]
    assert query(repo, "graph", "hubs", "--min-links", "50")[0] == 1
    assert query(repo, "graph", "clusters", "--min-size", "50")[0] == 1
    code, ans, _ = query(repo, "graph", "orphans")
    assert code == 0 and [n["path"] for n in ans["nodes"]] == ISOLATED
    assert query(repo, "graph", "neighborhood", "Espresso", "--depth", "-1")[0] == 2
    proc = run_kbase("graph", "path", "Tomatoes", "Espresso", "--all", "--format", "text",
                     cwd=repo)
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[1:] == [
        "  Garden/Tomatoes.md <-> Garden/Compost.md <-> Coffee Grounds.md <-> "
        "Coffee/Roasting.md <-> Coffee/Espresso.md",
        "  Garden/Tomatoes.md <- Garden/Garden.md <- Index Page.md -> Coffee/Coffee.md "
        "<-> Coffee/Espresso.md"]


def test_overlay_changes_the_answer_without_a_rebuild(tmp_path: Path) -> None:
    repo = make_vault(tmp_path / "vault")
    write(repo, {".gitignore": ".kbase/\n"})
    proc = run_kbase("index", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    manifest = (repo / ".kbase" / "manifest.json").read_bytes()
    code, ans, _ = query(repo, "graph", "orphans")
    assert code == 0 and "Lonely.md" in [n["path"] for n in ans["nodes"]]
    assert ans["index"]["origin"] == "worktree" and not ans["index"]["overlaid"]
    write(repo, {"Lonely.md": "# Lonely\n\nNow it links to [[Compost]].\n",
                 "Drafts/Scratch.md": "# Scratch\n\nAnd [[Lonely]].\n"})
    code, ans, _ = query(repo, "graph", "orphans", "--no-backlinks")
    assert "Lonely.md" not in [n["path"] for n in ans["nodes"]]
    assert {"path": "Drafts/Scratch.md", "title": "Scratch", "isolated": False,
            "outgoing": 1} in ans["nodes"]
    assert ans["index"]["overlaid"] and "Lonely.md" in ans["index"]["stale_notes"]
    code, ans, _ = query(repo, "graph", "path", "Scratch", "Tomatoes", "--directed")
    assert code == 0 and ans["paths"] == [["Drafts/Scratch.md", "Lonely.md",
                                           "Garden/Compost.md", "Garden/Tomatoes.md"]]
    assert (repo / ".kbase" / "manifest.json").read_bytes() == manifest


# -- pictures -------------------------------------------------------------------------
def test_labels_escape_quotes_brackets_and_newlines() -> None:
    title = 'Say "Cheese" [v2] #1 <b>\n`x` & \\n'
    label = mermaid_label(title)
    assert label == '"Say #34;Cheese#34; [v2] #35;1 #60;b#62; #96;x#96; #38; \\n"'
    assert "\n" not in label and label.count('"') == 2
    assert dot_string(title) == '"Say \\"Cheese\\" [v2] #1 <b> `x` & \\\\n"'
    assert re.fullmatch(DOT_STR, dot_string(title))


@pytest.mark.parametrize("args", [
    ("neighborhood", "Espresso", "--depth", "2"), ("orphans", "--no-backlinks"),
    ("clusters",), ("path", "Tomatoes", "Espresso", "--all"), ("hubs",)])
def test_pictures_are_well_formed(view: QueryView, repo: Path, args: tuple[str, ...]) -> None:
    params: dict[str, Any] = {
        "neighborhood": {"note": "Espresso", "depth": 2},
        "orphans": {"no_backlinks": True}, "clusters": {}, "hubs": {},
        "path": {"source": "Tomatoes", "target": "Espresso", "all_paths": True}}[args[0]]
    typed = graph_answer(view, args[0], **params)
    ans = typed.to_json()
    ids = {n["path"]: f"n{i}" for i, n in enumerate(ans["nodes"])}
    want = sorted((ids[e["source"]], ids[e["target"]]) for e in ans["edges"])
    for fmt, check in (("mermaid", check_mermaid), ("dot", check_dot)):
        proc = run_kbase("graph", *args, "--format", fmt, cwd=repo)
        assert proc.returncode == 0, proc.stderr
        text = proc.stdout
        assert text == (mermaid(typed) if fmt == "mermaid" else dot(typed))
        declared, edges = check(text)
        assert declared == set(ids.values()) and sorted(edges) == want
    if args[0] == "orphans":
        assert '#34;Cheese#34; [v2]' in mermaid(typed)
        assert 'label="Say \\"Cheese\\" [v2]"' in dot(typed)
    if args[0] == "clusters":
        assert mermaid(typed).count("subgraph") == len(ans["clusters"]) == 2
        assert dot(typed).count("subgraph cluster_") == 2


def _walk_said(ans: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    walk, meta = ans["link_traversal"], ans["metadata"]
    assert sum(walk["traversal_path"]) == meta["documents_analyzed"]
    assert walk["max_depth_reached"] == len(walk["traversal_path"]) - 1
    return walk, meta


def test_graph_walks_say_how_they_walked(view: QueryView, truth: nx.DiGraph) -> None:
    """`link_traversal` and `metadata` (issue 39) in every walk: neighbourhood, path and
    explore, counted as networkx walks the same graph."""
    g = truth.to_undirected()
    ans = graph_answer(view, "neighborhood", note="Espresso", depth=2).to_json()
    walk, meta = _walk_said(ans)
    reached = nx.single_source_shortest_path_length(g, "Coffee/Espresso.md", cutoff=2)
    hop = [sum(1 for d in reached.values() if d == i) for i in range(3)]
    assert walk["traversal_path"] == hop and meta["documents_analyzed"] == len(reached)
    inner = [n for n, d in reached.items() if d < 2]
    assert walk["total_links_found"] == len({frozenset(e) for e in g.edges(inner)})
    assert meta["linked_documents"] == len(ans["nodes"]) - 1 and meta["limitations"] == []
    capped = graph_answer(view, "neighborhood", note="Espresso", depth=3, limit=3).to_json()
    assert capped["metadata"]["limitations"] == [
        f"{capped['found'] + 1 - 3} notes reached past limit: not listed"]
    path = graph_answer(view, "path", source="Tomatoes", target="Espresso").to_json()
    walk, meta = _walk_said(path)
    assert meta["primary_documents"] == 2 and walk["max_depth_reached"] >= path["length"]
    assert meta["documents_analyzed"] == len(nx.node_connected_component(g,
                                                                         "Coffee/Espresso.md"))
    mapped = graph_answer(view, "explore", note="Espresso", depth=2).to_json()
    walk, meta = _walk_said(mapped)
    assert walk["traversal_path"] == hop and meta["linked_documents"] == mapped["found"]
    summary = graph_answer(view, "explore", note="Espresso", depth=2, summary=True).to_json()
    assert summary["link_traversal"] == walk


def test_explore_says_it_walked_one_hop(repo: Path) -> None:
    code, ans, _ = query(repo, "explore", "Espresso")
    assert code == 0
    walk, meta = _walk_said(ans)
    linked = {lk["path"] for lk in ans["outlinks"] if lk["path"]} | \
        {lk["path"] for lk in ans["backlinks"]}
    assert walk["traversal_path"] == [1, len(linked)] and meta["linked_documents"] == len(linked)
    assert walk["total_links_found"] == len(ans["outlinks"]) + len(ans["external"]) + \
        len(ans["backlinks"])
