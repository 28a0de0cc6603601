"""What search reads and shows of a note's text: emphasis inside words is no word break
(for BM25 and for the model), and a hit's line and snippet are its best text line,
never an embed or an image."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from querykit import clone, publish_index, query

from kbase_ci.index.tokens import plain


@pytest.mark.parametrize(("text", "want"), [
    ("**T**ranslation **L**ookaside **B**uffer", "Translation Lookaside Buffer"),
    ("data*base* and ***x***y", "database and xy"),
    ("**bold words** stay apart", "**bold words** stay apart"),
    ("snake_case_name", "snake_case_name"),
    ("`**T**ranslation` in code", "`**T**ranslation` in code"),
])
def test_emphasis_inside_words_is_dropped_outside_code(text: str, want: str) -> None:
    assert plain(text) == want


def test_a_spelled_out_name_finds_its_emphasised_note(make_repo: Callable[..., Path],
                                                      tmp_path: Path) -> None:
    src = make_repo({
        "TLB.md": "# TLB\n\nThe **T**ranslation **L**ookaside **B**uffer caches page "
                  "table entries.\n",
        "Other.md": "# Other\n\nA note on translation of documents.\n"})
    publish_index(src)
    cl = clone(src, tmp_path / "clone")
    code, ans, err = query(cl, "search", "lookaside buffer", "--mode", "bm25")
    assert code == 0, err
    assert [r["path"] for r in ans["results"]] == ["TLB.md"]
    assert ans["results"][0]["evidence"]["matched"] == ["lookaside", "buffer"]


def test_the_snippet_is_the_best_text_line_never_an_image(make_repo: Callable[..., Path],
                                                          tmp_path: Path) -> None:
    src = make_repo({
        "Boards.md": "# Boards\n\n![[kanban-board-columns.png|500]]\n"
                     "Columns are listed here.\n"
                     "A kanban board shows tasks in columns by status.\n"})
    publish_index(src)
    cl = clone(src, tmp_path / "clone")
    code, ans, err = query(cl, "search", "kanban board columns", "--mode", "bm25",
                           "--snippets")
    assert code == 0, err
    hit = ans["results"][0]
    assert hit["path"] == "Boards.md" and hit["line"] == 5  # the most words, as text
    assert hit["snippet"].startswith("Columns are listed here. A kanban board")
    assert "png" not in hit["snippet"] and "![[" not in hit["snippet"]


def test_identifiers_inside_code_are_matched_words(make_repo: Callable[..., Path],
                                                   tmp_path: Path) -> None:
    """An API asked by name (`registerEvent`, `MetadataCache`) matches the code that
    calls it (`this.registerEvent(...)`, `app.metadataCache`), fenced or inline: the
    identifier is a word of its own, besides its parts."""
    src = make_repo({
        "Events.md": "# Events\n\nListen to vault changes:\n\n```ts\n"
                     "this.registerEvent(this.app.metadataCache.on('changed', cb));\n```\n\n"
                     "Read `app.metadataCache.getFileCache(file)` for headings.\n",
        "Prose.md": "# Prose\n\nTo register an event, keep the metadata in a cache.\n"})
    publish_index(src)
    cl = clone(src, tmp_path / "clone")
    for asked, words in (("registerEvent", ["registerEvent", "register", "Event"]),
                         ("MetadataCache", ["MetadataCache", "Metadata", "Cache"]),
                         # "get" is a frame word (kbase_ci.query.framewords): neither
                         # matched nor missing
                         ("getFileCache", ["getFileCache", "File", "Cache"])):
        code, ans, err = query(cl, "search", asked, "--mode", "bm25")
        assert code == 0, err
        top = ans["results"][0]
        assert top["path"] == "Events.md", ans["results"]
        assert top["evidence"]["matched"] == words and top["evidence"]["missing"] == []
        # Every word of the query in one note: at least `medium` (a two-note index has no
        # background against which its words could sit together "beyond chance").
        assert ans["verdict"]["answered"] and top["confidence"] in ("medium", "high")
        prose = next(r for r in ans["results"] if r["path"] == "Prose.md")
        assert asked not in prose["evidence"]["matched"]  # its words, not the name
