"""Search answers say why a hit is a hit (the query words it holds, where, absolute
scores) and how far to trust it; a query about something the vault does not hold exits 1
with the ranking all the same and a verdict saying why it is no answer; filters that name
nothing are usage errors, not "no results"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from indexkit import make_tiny_model
from querykit import clone, paths, publish_index, published_demo, query

from kbase_ci.query.evidence import LEVELS, RULE, Signals, level
from kbase_ci.query.framewords import frame_words
from kbase_ci.query.queryterms import QueryTerms
from kbase_ci.query.verdict import follow


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return published_demo(tmp_path_factory.mktemp("evidence"))


def test_each_hit_carries_its_evidence(demo: Path) -> None:
    code, ans, err = query(demo, "search", "Package Manager", "--mode", "bm25")
    assert code == 0, err
    top = ans["results"][0]
    assert top["path"] == "Getting Started.md" and top["confidence"] == "high"
    ev = top["evidence"]
    assert ev["matched"] == ["Package", "Manager"] and ev["missing"] == []  # as written
    assert ev["fields"] == ["body"] and ev["bm25"] > 0 and ev["cosine"] is None
    assert ev["coverage"] == 1.0 and ev["idf_coverage"] == 1.0 and ev["semantic"] is None
    code, ans, _ = query(demo, "search", "resolution rules", "--mode", "bm25")
    hit = next(r for r in ans["results"] if r["path"] == "Concepts/Linking.md")
    assert hit["evidence"]["fields"] == ["heading"]  # "## Resolution: rules"


def test_names_and_headings_are_confident_whatever_their_words(demo: Path) -> None:
    _, ans, _ = query(demo, "search", "wikilinks", "--mode", "bm25", "--limit", "1")
    hit = ans["results"][0]
    assert (hit["path"], hit["confidence"]) == ("Concepts/Linking.md", "high")
    assert "alias" in hit["evidence"]["fields"]
    _, ans, _ = query(demo, "search", "Configure", "--mode", "bm25", "--limit", "1")
    assert ans["results"][0]["path"] == "Getting Started.md"
    assert ans["results"][0]["confidence"] == "high"


def test_an_absent_topic_is_shown_ranked_but_not_answered(demo: Path) -> None:
    code, ans, _ = query(demo, "search", "kubernetes horizontal pod autoscaling")
    assert code == 1 and ans["results"] == []  # no note holds any word: nothing ranks
    v = ans["verdict"]
    assert v["answered"] is False and v["confidence"] == "none"
    assert v["unknown_terms"] == ["kubernetes", "horizontal", "pod", "autoscaling"]
    assert v["reason"] == "no note holds any of the query's words"
    assert v["near_topic"] is None
    # Words shared with notes, but not enough of the question: the ranking is shown,
    # every hit with its confidence, and the nearest note is named.
    code, ans, _ = query(demo, "search", "install the linux kernel headers")
    assert code == 1
    top = ans["results"][0]
    assert top["path"] == "Getting Started.md" and top["confidence"] == "none"
    assert set(top["evidence"]["matched"]) == {"install", "linux"}
    assert {"kernel", "headers"} <= set(top["evidence"]["missing"])
    v = ans["verdict"]
    assert v["answered"] is False and v["near_topic"] == "Getting Started.md"
    assert v["unknown_terms"] == ["kernel", "headers"]
    code, ans, _ = query(demo, "search", "install the linux kernel headers", "--concise")
    assert code == 1 and set(ans["results"][0]) == {"path", "title", "score", "confidence",
                                                    "matched"}


def test_the_verdict_decides_the_exit_code_and_hides_nothing(demo: Path) -> None:
    code, ans, _ = query(demo, "search", "how do I link notes", "--limit", "6")
    assert code == 0 and ans["verdict"]["answered"] is True
    # "how do I" is the question's frame: the words are "link" and "notes", both held,
    # common enough in this vault to stand together by chance (one measure: medium)
    assert ans["verdict"]["confidence"] == "medium"
    assert ans["verdict"]["reason"] == "a hit holds every word of the query"
    assert "hidden" not in ans
    ranked = ans["results"]
    assert len(ranked) == 6  # up to the limit, whatever each hit's confidence
    labels = [r["confidence"] for r in ranked]
    assert labels == sorted(labels, key=LEVELS.index) and "none" in labels
    # --min-confidence keeps the ranking's prefix at that level or above (labels follow
    # the ranking), and says how many of the first `--limit` it left out
    code, ans, _ = query(demo, "search", "how do I link notes", "--limit", "6",
                         "--min-confidence", "low")
    kept = [r for r in ranked if r["confidence"] != "none"]
    assert code == 0 and paths(ans["results"]) == paths(kept)
    assert ans["hidden"] == len(ranked) - len(kept) > 0
    # hiding every hit leaves nothing that answers
    code, ans, _ = query(demo, "search", "install the linux kernel headers",
                         "--min-confidence", "low")
    assert code == 1 and ans["results"] == [] and ans["hidden"] > 0
    assert ans["verdict"]["near_topic"] == "Getting Started.md"
    code, _, err = query(demo, "search", "links", "--min-confidence", "sure")
    assert code == 2 and "sure" in err


def test_gibberish_is_not_answered_even_with_vectors(tmp_path: Path) -> None:
    model = make_tiny_model(tmp_path / "model")
    cl = published_demo(tmp_path, "--model", str(model))
    code, ans, err = query(cl, "search", "zzqx vlorp", "--model", str(model))
    assert code == 1, err
    assert ans["notices"] == [] and ans["verdict"]["answered"] is False
    assert ans["verdict"]["unknown_terms"] == ["zzqx", "vlorp"]
    assert all(r["confidence"] == "none" for r in ans["results"])
    code, ans, _ = query(cl, "search", "package manager", "--model", str(model))
    assert code == 0 and ans["results"][0]["evidence"]["cosine"] is not None


def test_filters_match_any_case_and_name_close_ones(demo: Path) -> None:
    code, ans, _ = query(demo, "search", "links", "--mode", "bm25", "--domain", "concepts")
    assert code == 0 and ans["results"]
    assert {r["domain"] for r in ans["results"]} == {"Concepts"}
    code, _, err = query(demo, "search", "links", "--domain", "Concept")
    assert code == 2 and "no domain 'Concept'; did you mean Concepts" in err
    code, _, err = query(demo, "notes", "--domain", "projectz")
    assert code == 2 and "did you mean Projects" in err
    code, ans, _ = query(demo, "notes", "--tag", "HOWTO")
    assert code == 0 and paths(ans["notes"]) == ["Getting Started.md"]
    code, _, err = query(demo, "notes", "--tag", "howtoo")
    assert code == 2 and "did you mean howto" in err
    for bad in ("0", "-3"):
        code, _, err = query(demo, "search", "links", "--limit", bad)
        assert code == 2 and "--limit must be at least 1" in err
    code, _, err = query(demo, "gaps", "--domain", "archiv")
    assert code == 2 and "did you mean Archive" in err


def signals(held: int = 2, coverage: float = 0.5, idf: float = 0.5, chance: float = 0.5,
            margin: float | None = None, unknown: int = 0, names: int = 0) -> Signals:
    return Signals(False, held, coverage, idf, chance, margin, unknown, names)


@pytest.mark.parametrize(("s", "want"), [
    (signals(), "none"),                                # nothing beyond its background
    (signals(held=3, coverage=1.0, idf=1.0), "medium"),   # every word, and most of them
    (signals(held=1, coverage=1.0, idf=1.0), "medium"),   # one word, held: every, idf
    (signals(chance=1.2), "low"),                         # words together beyond chance
    (signals(chance=1.2, idf=0.8), "medium"),
    (signals(margin=1.1), "low"),                         # beyond every null question
    (signals(chance=1.2, margin=1.1), "high"),            # words and meaning
    (signals(held=2, coverage=1.0, chance=1.2), "high"),  # ... or words and every one
    (signals(held=3, coverage=0.5), "low"),               # most of the query's words
    (signals(held=4, coverage=1.0, chance=1.5), "high"),  # three measures
    (signals(chance=1.2, unknown=1), "none"),             # a word no note holds: +0.5
    (signals(chance=1.6, unknown=1), "low"),
    (signals(chance=1.6, unknown=1, names=1), "none"),    # a name no note holds: +1
    (signals(margin=1.6, unknown=1, names=1), "none"),    # ... on both bars
    (signals(held=3, coverage=0.6, unknown=1, names=1), "none"),  # and no `most`
    (signals(held=3, coverage=0.6, unknown=1), "low"),
])
def test_confidence_levels(s: Signals, want: str) -> None:
    assert level(s, RULE) == want
    assert level(Signals(True, 0, 0.0, 0.0, 0.0, None, 2, 2), RULE) == "high"  # named


def test_labels_follow_the_ranking() -> None:
    # in the verdict's window a hit takes the best evidence at or below it there; past
    # it a hit is never above the one before it
    assert follow(["none", "low", "high", "none", "medium", "low"]) == \
        ["high", "high", "high", "none", "none", "none"]
    assert follow(["medium", "none", "none", "high", "low"]) == \
        ["medium", "none", "none", "none", "none"]
    assert follow(["high", "low", "medium", "medium", "low", "high"]) == \
        ["high", "medium", "medium", "medium", "low", "low"]
    assert follow([]) == []


def test_the_frame_of_a_question_is_neither_missing_nor_matched() -> None:
    frame = frame_words("english")
    # issue 37's questions; MySQL's list cut as the index cuts words (don't -> don)
    assert {"what", "happens", "during", "how", "do", "keep", "difference", "between",
            "don", "work"} <= frame
    assert not {"context", "switch", "process", "thread", "tax", "guitar"} & frame
    assert frame_words("none") == frame and frame_words("german") == frozenset()
    q = QueryTerms.asked("what happens during a context switch",
                         (("what", "what"), ("happens", "happen"), ("during", "dure"),
                          ("context", "context"), ("switch", "switch")), {},
                         frozenset({"happen"}))
    assert q.content(frame).terms == ["context", "switch"]
    # nothing but frame words: they are the question's words after all
    q = QueryTerms.asked("how do", (("how", "how"), ("do", "do")), {})
    assert q.content(frame).terms == ["how", "do"]


def test_unknown_names_and_compounds() -> None:
    written = (("Todoist", "todoist"), ("import", "import"), ("to-dos", "to-do"),
               ("dos", "dos"), ("PlantUML", "plantuml"), ("HDR10", "hdr10"),
               ("Farbraum", "farbraum"))
    q = QueryTerms.asked("Farbraum: import my to-dos from Todoist with PlantUML in HDR10",
                         written, {}, frozenset({"todoist", "to-do", "dos", "plantuml",
                                                 "hdr10", "farbraum"}))
    got = q.content(frozenset())
    # a joined compound no note holds speaks through its parts; one word is a name
    assert got.terms == ["todoist", "import", "dos", "plantuml", "hdr10", "farbraum"]
    assert got.unknown == frozenset({"todoist", "dos", "plantuml", "hdr10", "farbraum"})
    assert got.names == frozenset({"todoist", "plantuml", "hdr10"})  # not the first word


def test_question_words_are_the_frame_not_the_topic(demo: Path) -> None:
    code, ans, _ = query(demo, "search", "what is my Package Manager and why does it",
                         "--mode", "bm25", "--limit", "1")
    ev = ans["results"][0]["evidence"]
    assert code == 0 and ev["matched"] == ["Package", "Manager"] and ev["missing"] == []
    assert ev["idf_coverage"] == 1.0
    # a query of nothing but question words keeps them (it asks for those words)
    _, ans, _ = query(demo, "search", "how do I", "--mode", "bm25", "--limit", "1")
    assert ans["verdict"]["reason"] != (
        "the query has only common words (stopwords), and names no note")


def test_evidence_is_counted_over_the_whole_note(make_repo: Callable[..., Path],
                                                 tmp_path: Path) -> None:
    # 502 and 504 are answered in two paragraphs of one note (two chunks): the note
    # holds the whole question; before issue 27 its best paragraph spoke for it (half).
    filler = " ".join(f"word{i}" for i in range(200))
    src = make_repo({
        "Gateway.md": f"# Errors\n\n## Bad\n\nA 502 bad gateway. {filler}\n\n"
                      f"## Slow\n\nA 504 means the upstream timed out. {filler}\n",
        "Other.md": "# Other\n\nNothing about status codes here.\n"})
    publish_index(src)
    cl = clone(src, tmp_path / "clone")
    code, ans, err = query(cl, "search", "502 or 504", "--mode", "bm25", "--limit", "1")
    assert code == 0, err
    ev = ans["results"][0]["evidence"]
    assert ans["results"][0]["path"] == "Gateway.md"
    assert ev["matched"] == ["502", "504"] and ev["coverage"] == 1.0
    # every word held, in two paragraphs (not together): one measure, and the IDF mass
    assert ans["results"][0]["confidence"] == "medium"
