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

from kbase_ci.query.evidence import RULE, level


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
    assert ans["verdict"]["confidence"] == "high"
    assert ans["verdict"]["reason"] == "a hit holds enough of the query's words"
    assert "hidden" not in ans
    ranked = ans["results"]
    assert len(ranked) == 6  # up to the limit, whatever each hit's confidence
    assert {r["confidence"] for r in ranked} <= {"high", "medium", "low", "none"}
    assert "none" in {r["confidence"] for r in ranked}
    # --min-confidence hides the hits below it, and says how many it hid
    code, ans, _ = query(demo, "search", "how do I link notes", "--limit", "6",
                         "--min-confidence", "low")
    kept = [r for r in ranked if r["confidence"] != "none"]
    assert code == 0 and paths(ans["results"])[:len(kept)] == paths(kept)
    assert all(r["confidence"] != "none" for r in ans["results"])
    assert ans["hidden"] >= len(ranked) - len(kept) > 0  # the walk goes on past them
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


@pytest.mark.parametrize(("idf", "coverage", "margin", "want"), [
    (1.0, 1.0, None, "high"),
    (0.85, 0.5, None, "medium"),
    (0.65, 0.5, None, "low"),
    (0.55, 0.5, None, "none"),         # lexical evidence alone needs `alone`
    (0.72, 0.5, 0.6, "low"),           # with vectors that agree, `low` from 0.7
    (0.72, 0.5, 0.2, "none"),          # shared words without the meaning: vetoed
    (0.8, 0.6, 0.2, "medium"),         # unless the words are sure enough
    (0.35, 0.3, 1.1, "low"),           # a paraphrase: few words, beyond every null query
    (0.7, 0.3, 1.1, "medium"),
    (0.1, 0.2, 1.5, "none"),           # meaning alone is no evidence
    (0.95, 0.2, None, "none"),         # one rare word of a long query
])
def test_confidence_levels(idf: float, coverage: float, margin: float | None,
                           want: str) -> None:
    assert level(idf, coverage, margin, False, RULE) == want
    assert level(0.0, 0.0, None, True, RULE) == "high"  # the query names the note


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
    assert ans["results"][0]["confidence"] == "high"
