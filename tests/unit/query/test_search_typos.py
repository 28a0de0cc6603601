"""A typo is not evidence that the vault does not cover a question: a query word no note
holds that is one or two edits from a word the vault writes beside the query's other
words is read as that word (kbase_ci.query.misspell), in the evidence and, at a reduced
weight, in BM25; a word the vault knows, a name, an English word or a word with no such
neighbour is never read as another. And a capitalised word mid-query is a name only in
an English question: German writes every noun so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_kbase
from querykit import clone, publish_index, query

from kbase_ci.index.tokens import stemmer
from kbase_ci.query import misspell
from kbase_ci.query.framewords import frame_words
from kbase_ci.query.queryterms import QueryTerms

NOTES = {
    "Math.md": "# Math\n\nWrite a KaTeX equation between dollar signs to typeset it.\n",
    "Garden.md": "# Garden\n\nCompost feeds the soil; water the beds at dawn.\n",
    "Kitchen.md": "# Kitchen\n\nSharpen the knives before slicing bread.\n",
    "Travel.md": "# Travel\n\nPack a passport, tickets and a charger.\n",
    "Music.md": "# Music\n\nTune the guitar strings before a rehearsal.\n",
    "Backlinks.md": "# Backlinks\n\nThe sidebar lists the backlinks of the open note.\n",
    "Reading.md": "# Reading\n\nKeep a list of the books worth a second look.\n",
    "Sleep.md": "# Sleep\n\nA dark room and a fixed bedtime help the night.\n",
}


@pytest.fixture
def vault(make_repo: Callable[..., Path], tmp_path: Path) -> Path:
    src = make_repo(NOTES)
    publish_index(src)
    return clone(src, tmp_path / "clone")


def test_a_typo_question_is_answered(vault: Path) -> None:
    # "equasion" is in no note: before, it was an unknown word (a raised bar), and
    # "katex equasion" exited 1 with Math.md first
    code, ans, err = query(vault, "search", "katex equasion", "--mode", "bm25")
    assert code == 0 and ans["verdict"]["answered"], err
    top = ans["results"][0]
    assert top["path"] == "Math.md" and top["confidence"] == "high"
    assert top["evidence"]["matched"] == ["katex", "equasion"]
    assert top["evidence"]["missing"] == [] and ans["verdict"]["unknown_terms"] == []
    assert ans["notices"] == ["read as misspellings of words the notes hold (no note "
                              "holds them): 'equasion' as 'equation'"]
    proc = run_kbase("search", "katex equasion", "--mode", "bm25", "--format", "text",
                     cwd=vault)
    assert proc.returncode == 0 and proc.stdout.startswith(ans["notices"][0] + "\n")


def test_what_is_never_read_as_a_slip(vault: Path) -> None:
    # a word a note holds is itself (no notice), whatever word is near it
    _, ans, _ = query(vault, "search", "katex equation", "--mode", "bm25")
    assert ans["notices"] == []
    # an English word the vault does not use is that word, not a slip of one it does
    # ("soul" is a letter from "soil", beside "compost" in Garden.md)
    _, ans, _ = query(vault, "search", "compost soul", "--mode", "bm25")
    assert ans["notices"] == [] and ans["verdict"]["unknown_terms"] == ["soul"]
    # a slip must stand beside the query's other words in some paragraph: "equasion"
    # and "guitar" share none
    _, ans, _ = query(vault, "search", "guitar equasion", "--mode", "bm25")
    assert ans["notices"] == [] and ans["verdict"]["unknown_terms"] == ["equasion"]
    # a name is the topic, not a slip ("Katex2" holds a digit)
    _, ans, _ = query(vault, "search", "Katex2 equation", "--mode", "bm25")
    assert ans["notices"] == []


def test_the_rule_of_near_words() -> None:
    stem = stemmer("english")
    assert misspell.reach("equasion") == 2 and misspell.reach("synch") == 1
    assert misspell.reach("bed") == 0 and misspell.reach("hdr10") == 0
    edits = misspell.edits("taks")
    assert {"task", "tasks", "tak", "tams"} <= edits  # swap, insert, delete, replace
    assert all(e[0] == "t" for e in edits) and "taks" not in edits
    vocabulary = {"equat": 3, "equal": 40, "equip": 2}
    # one edit from "equation", whose stem the index holds; "equal" is one edit from the
    # stem but not from the word
    assert misspell.near("equasion", stem("equasion"), vocabulary, stem) == \
        {"equat": (1, "equation")}
    # two edits, for a long word, on the stems
    assert misspell.near("compatbilty", stem("compatbilty"), {"compatibiliti": 2},
                         stem) == {"compatibiliti": (2, "compatibiliti")}
    assert misspell.near("equasion", stem("equasion"), {"quasi": 5}, stem) == {}
    assert misspell.english("pasta") and misspell.english("pans")
    assert not misspell.english("equasion") and not misspell.english("certifcate")


def test_a_capitalised_word_is_a_name_only_in_an_english_question() -> None:
    frame = frame_words("english")
    german = QueryTerms.asked("Backlinks Seitenleiste anzeigen",
                              (("Backlinks", "backlink"), ("Seitenleiste", "seitenleist"),
                               ("anzeigen", "anzeigen")), {},
                              frozenset({"seitenleist", "anzeigen"}))
    # German writes every noun with a capital: not a thing the vault never mentions;
    # and its words no note holds are the language's, not the topic's: the vault is
    # judged on "Backlinks"
    got = german.content(frame)
    assert got.names == frozenset() and got.unknown == frozenset({"seitenleist", "anzeigen"})
    got = got.foreign(frame)
    assert got.unknown == frozenset() and got.terms == ["backlink"]
    assert got.aside == (("Seitenleiste", "seitenleist"), ("anzeigen", "anzeigen"))
    english = QueryTerms.asked("how does the Sharpshooter feat work",
                               (("Sharpshooter", "sharpshoot"), ("feat", "feat")), {},
                               frozenset({"sharpshoot"}))
    got = english.content(frame).foreign(frame)
    assert got.names == got.unknown == frozenset({"sharpshoot"})
    assert got.terms == ["sharpshoot", "feat"]
    # a title-cased keyword query tells no language: no name, nothing left out
    title = QueryTerms.asked("Feat Sharpshooter",
                             (("Feat", "feat"), ("Sharpshooter", "sharpshoot")), {},
                             frozenset({"sharpshoot"}))
    got = title.content(frame).foreign(frame)
    assert got.names == frozenset() and got.terms == ["feat", "sharpshoot"]
    # written as a name whatever the language: a capital inside, a digit
    mixed = QueryTerms.asked("Farbraum CIELAB Weißpunkt D65",
                             (("Farbraum", "farbraum"), ("CIELAB", "cielab"),
                              ("Weißpunkt", "weißpunkt"), ("D65", "d65")), {},
                             frozenset({"farbraum", "cielab", "weißpunkt", "d65"}))
    assert mixed.content(frame).names == \
        frozenset({"cielab", "d65"})


def test_a_question_in_another_language_is_judged_on_the_words_the_vault_has(
        vault: Path) -> None:
    # before, "Seitenleiste" was a name no note holds (a capital mid-query) and both
    # German words raised the bars: exit 1 with Backlinks.md first
    code, ans, err = query(vault, "search", "Backlinks Seitenleiste anzeigen", "--mode",
                           "bm25")
    assert code == 0 and ans["verdict"]["answered"], err
    assert ans["results"][0]["path"] == "Backlinks.md"
    assert ans["results"][0]["evidence"]["matched"] == ["Backlinks"]
    assert ans["results"][0]["evidence"]["missing"] == []  # neither missing nor matched
    assert ans["verdict"]["unknown_terms"] == ["Seitenleiste", "anzeigen"]
    # mostly the vault's words: English, and the word no note holds is missing
    _, ans, _ = query(vault, "search", "backlinks sidebar anzeigen", "--mode", "bm25")
    assert ans["results"][0]["evidence"]["missing"] == ["anzeigen"]
