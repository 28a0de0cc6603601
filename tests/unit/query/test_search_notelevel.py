"""The note-level BM25 list hybrid search fuses beside the paragraph one (docs/query.md,
"Ranking"): computed at query time from the shards' paragraph postings, it must score
each note as BM25 over the note's whole indexed text would, for indexed notes and for
notes changed since the index alike."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
from indexkit import make_tiny_model
from querykit import published_demo

from kbase_ci.index.blocks import Fusion, Ranker
from kbase_ci.index.bm25 import LEVEL, PARAMS, indexed_text
from kbase_ci.index.chunks import chunk_note
from kbase_ci.index.ranking import NOTES, WEIGHTS, lexical, rankers_of
from kbase_ci.query.discovery import open_source
from kbase_ci.query.hits import ChunkHit
from kbase_ci.query.notebm25 import chunk_tf, ranked_notes
from kbase_ci.query.overlay import tokenize
from kbase_ci.query.search import Searcher, rank, ranked
from kbase_ci.query.view import QueryView
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.scanner import scan

K1, B = PARAMS["k1"], PARAMS["b"]
QUERIES = ["link resolution rules", "package manager install", "project notes archive",
           "home", "embeds and headings in notes"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return published_demo(tmp_path_factory.mktemp("notelevel"))


def view_of(root: Path) -> QueryView:
    vault = Vault(root)
    return QueryView(vault, open_source(vault, None))


def reference(view: QueryView, searcher: Searcher, query: str) -> dict[str, float]:
    """BM25 over each note's chunks' indexed text (work tree), added up per note."""
    tf: dict[str, Counter[str]] = {}
    for note in scan(view.vault, list(view.vault.notes), use_cache=False)[0]:
        info = view.notes[note.path]
        tf[note.path] = Counter()
        for c in chunk_note(note, (view.vault.root / note.path).read_bytes()):
            tf[note.path].update(tokenize(indexed_text(info.title, info.aliases,
                                                       c.heading_path, c.text),
                                          searcher.stop, searcher.stemmer))
    held = {p: c for p, c in tf.items() if c}
    avg = sum(sum(c.values()) for c in held.values()) / len(held)
    terms = tokenize(query, searcher.query_stop(query), searcher.stemmer)
    out: dict[str, float] = {}
    for path, counts in held.items():
        norm = K1 * (1 - B + B * sum(counts.values()) / avg)
        score = 0.0
        for t in terms:
            df = sum(1 for c in held.values() if c[t])
            if counts[t]:
                idf = math.log(1 + (len(held) - df + 0.5) / (df + 0.5))
                score += idf * counts[t] / (counts[t] + norm)
        if score > 0:
            out[path] = score
    return out


def check(view: QueryView) -> None:
    for query in QUERIES:
        searcher = Searcher(view)
        got = ranked_notes(searcher, query, 200, plain=False)
        want = reference(view, searcher, query)
        assert len(want) > 1, query
        assert dict(got) == pytest.approx(want, rel=1e-9), query
        assert [p for p, _ in got] == sorted(want, key=lambda p: (-want[p], p)), query
        # Without numpy (the model-free tier never loads it): the very same floats.
        assert ranked_notes(Searcher(view), query, 200, plain=True) == got, query


def test_note_scores_are_bm25_over_the_whole_note(demo: Path) -> None:
    check(view_of(demo))


def test_a_note_changed_since_the_index_is_scored_from_the_work_tree(demo: Path) -> None:
    note = demo / "Getting Started.md"
    before = note.read_text(encoding="utf-8")
    try:
        note.write_text(before + "\n\nLink resolution rules, again: resolution.\n",
                        encoding="utf-8")
        view = view_of(demo)
        assert "Getting Started.md" in view.fresh.changed
        check(view)
    finally:
        note.write_text(before, encoding="utf-8")


@pytest.mark.parametrize("k", [0.375, 1.0, 1.5, 3.0, 6.0])
def test_a_stored_level_gives_its_term_count_back(k: float) -> None:
    """The index stores tf / (tf + K) in 255 steps; the count comes back exactly while
    a step is finer than the gap between two counts (here up to 8 at any K)."""
    counts = list(range(1, 9))
    levels = [min(255, max(1, round(tf / (tf + k) / LEVEL))) for tf in counts]
    assert chunk_tf(levels, [k] * len(counts)).tolist() == counts


def test_an_index_built_before_the_note_list_fuses_as_it_did() -> None:
    old = Fusion("z-score", 100, {"bm25": Ranker(1.0, None, "zero"),
                                  "semantic": Ranker(3.0, 5, "last", 100)})
    assert NOTES not in rankers_of(old)
    assert rankers_of(None)[NOTES] == WEIGHTS["model2vec"][NOTES]


def test_hybrid_fuses_the_note_list_and_the_single_modes_do_not(tmp_path: Path) -> None:
    model = make_tiny_model(tmp_path / "model")
    view = view_of(published_demo(tmp_path, "--model", str(model)))
    assert NOTES in rankers_of(view.manifest.fusion)  # a new build carries its weight
    query = "link resolution rules"
    s = Searcher(view, model)
    embedder = s.embedder()[0]
    lists = {"bm25": s.bm25(query), "semantic": s.semantic(query, embedder),
             "notes": [ChunkHit(p, (), 1, 1, v) for p, v in ranked_notes(s, query, 200)]}
    def order(mode: str) -> list[tuple[str, float]]:
        return [(n.path, n.score) for n in rank(view, query, mode=mode, model=model).fused]

    def fused(names: tuple[str, ...]) -> list[tuple[str, float]]:
        got = ranked(view, query, {n: lists[n] for n in names}, view.manifest.fusion)[0]
        return [(n.path, n.score) for n in got]

    assert order("hybrid") == fused(("bm25", "semantic", "notes"))
    assert order("hybrid") != fused(("bm25", "semantic"))  # the note list is scored in
    assert order("semantic") == fused(("semantic",))
    # Without vectors, both BM25 lists with the model-free tier's weights (issue 37).
    lexical_order = [(n.path, n.score) for n in ranked(
        view, query, {n: lists[n] for n in ("bm25", "notes")}, lexical())[0]]
    assert order("bm25") == lexical_order
    assert order("bm25") != [(n.path, n.score) for n in ranked(
        view, query, {"bm25": lists["bm25"]}, lexical())[0]]
    no_model = rank(view, query, mode="hybrid", model=model, model_notice="not here")
    assert [(n.path, n.score) for n in no_model.fused] == lexical_order
