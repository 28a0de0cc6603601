"""`concept --definition` and `summarize` read a note by its structure (issue 39): on a
real index of fixtures/definitions, by the real CLI, each note shaped like one that
made the old position-based reading pick a non-definition."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, git, indexed_copy
from querykit import query

from kbase_ci.query.defining import defined_terms, lead
from kbase_ci.query.prose import Sentence, read

VAULT = FIXTURES / "definitions" / "vault"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One index for the module: every test only reads it."""
    root = tmp_path_factory.mktemp("defs")
    for args in (("init", "-q", "-b", "main"), ("config", "user.name", "Test"),
                 ("config", "user.email", "test@example.com"),
                 ("config", "commit.gpgsign", "false")):
        git(root, *args)
    return indexed_copy(root, VAULT)


def _definition(vault: Path, term: str) -> list[tuple[str, int, str]]:
    code, ans, err = query(vault, "concept", term, "--definition")
    assert code in (0, 1), err
    return [(d["path"], d["line"], d["text"]) for d in ans["definition"]]


@pytest.mark.parametrize(("term", "expected"), [
    # editor instructions are page furniture, and after them the note opens with code:
    # no lead; another note says what it is
    ("mutex", [("OS/Threads.md", 3, "A mutex is a lock that one thread holds at a time.")]),
    # a references line `[Virtual Memory: 1 Introduction - YouTube](...)` defines nothing
    ("virtual memory", [("OS/Virtual Memory.md", 10, "Virtual memory gives each process "
                         "the illusion of its own large address space.")]),
    # a question opens the note: no lead; another note says what it is
    ("page table", [("OS/Paging.md", 3, "A page table is the map from virtual pages to "
                     "physical frames.")]),
    # a release callout (its text a lazy continuation) is an aside, "were introduced"
    # no definition
    ("Presets", [("Docs/Presets.md", 6, "Presets allow you to save query instructions "
                  "and reuse them across queries.")]),
    # a note that is a list of entries has no lead, and nothing else defines it
    ("Algorithms", []),
    # Dendron: the frontmatter title names the note, its desc is the definition
    ("Lookup", [("Docs/dendron.topic.lookup.md", 4, "Find, create and navigate notes by "
                 "their hierarchy")]),
    # headings read as text: an emoji before the name, a link as its text
    ("bronze", [("OS/Paging.md", 11, "The bronze tier holds raw pages.")]),
    ("Swapping", [("OS/Paging.md", 15, "Swapping moves whole processes to disk.")]),
])
def test_definition_by_structure(vault: Path, term: str,
                                 expected: list[tuple[str, int, str]]) -> None:
    assert _definition(vault, term) == expected


def test_notes_counts_the_notes_discussing_it(vault: Path) -> None:
    # A section only links reach: the link discusses it, and `notes` says so
    code, ans, err = query(vault, "concept", "translation lookaside buffer")
    assert code == 0, err
    assert ans["documented_by"] == {"path": "OS/Paging.md",
                                    "heading": "Translation lookaside buffer"}
    assert [d["path"] for d in ans["discussed"]] == ["OS/Cache.md"]
    assert ans["notes"] == 1
    # the count is the discussion's, the documenting note aside, with --definition too
    _, full, _ = query(vault, "concept", "page table", "--limit", "100")
    _, short, _ = query(vault, "concept", "page table", "--definition")
    assert full["notes"] == short["notes"] == len(full["discussed"]) == 2
    assert "OS/Page Table.md" not in {d["path"] for d in full["discussed"]}


def test_summarize_lead_is_prose(vault: Path) -> None:
    code, ans, err = query(vault, "summarize", "Virtual Memory")
    assert code == 0, err
    # not `---` (a rule) nor `500` (an embed's width), nor the references' lines
    assert [x["text"] for x in ans["lead"]] == [
        "Virtual memory gives each process the illusion of its own large address space."]
    assert ans["key_sentences"] == []
    code, ans, _ = query(vault, "summarize", "Presets")
    assert [x["line"] for x in ans["lead"]] == [6]


def test_reading_leaves_out_what_is_not_prose() -> None:
    text = ("---\na: b\n---\nTitle\n=====\n\n***\n\n![[pic.png|500]]\n\n"
            "<span class=\"x\">#feature/tags</span>\n\n{{fm.desc}}\n\n**A Label**\n\n"
            "See also: [[Other]], [[Third]]\n- [Talk: Intro - YouTube](https://y.t/1)\n"
            "- https://example.com/x\n- `code is (all) of it`\n\n"
            "`<date>` filters take [[Dates|dates]] here.\n\n    indented code\n\n"
            "> [!tip]\n> Aside text.\n\n"
            "> A quote stays.\n\n## Further Reading\n\nA book is good.\n\n## Next\n\n"
            "Back in the body.\n")
    sentences, _, headings = read(text)
    assert [(s.line, s.text, s.aside) for s in sentences] == [
        (22, "`<date>` filters take dates here.", False), (27, "Aside text.", True),
        (29, "A quote stays.", False), (33, "A book is good.", True),
        (37, "Back in the body.", False)]
    assert headings == [(1, "Title", 4), (2, "Further Reading", 31), (2, "Next", 35)]


@pytest.mark.parametrize(("text", "terms"), [
    ("These colours are called colour temperature.", ("colour temperature",)),
    ("An antielectron is also called a positron.", ("antielectron", "positron")),
    ("Leptons are not affected by the strong force.", ()),
    ("Expressions were introduced in Tasks 4.0.0.", ()),
    ("Status is just Tasks' name for:", ("Status",)),
])
def test_defined_terms(text: str, terms: tuple[str, ...]) -> None:
    assert defined_terms(Sentence(1, text, "", False)) == terms


@pytest.mark.parametrize(("text", "opening"), [
    ("- kde5\n- kde5-baseapps\n", None),  # a list of entries
    ("- They have spin 1/2\n- They have charge\n", None),
    ("- With refactoring, you can organize notes safely.\n", "With refactoring"),
    ("Why is it an ism? It is.\n", None),  # a question
    ("> [!note]\n> Aside.\n\nClick the button below to run it.\n\nIt is a lock.\n",
     "It is a lock."),
    ("This page is long.\n\nIt is a lock.\n", "It is a lock."),  # about the page
    ("| a | b |\n\nIt is a lock.\n", None),  # a table opens the note
    ("There is also a lock.\n", None),
])
def test_lead(text: str, opening: str | None) -> None:
    got = lead(read(text)[0])
    assert (got.text[:len(opening)] if got else None) == opening


def test_unknown_domain_lists_the_root_domain_last_and_says_what_it_is(vault: Path) -> None:
    code, _, err = query(vault, "concepts", "--domain", "Zzzz")
    assert code == 2
    assert err.strip().endswith(
        "no domain 'Zzzz'; the domains are Docs, OS, and \"\" (the notes at the vault root)")
    assert query(vault, "concepts", "--domain", "")[0] in (0, 1)  # it is a domain


@pytest.mark.parametrize("piece", ["a.", "+a", "[a](", "![a](b ", "- ", "> [!a]", "#a ",
                                   "{{", "<a ", "[a](\\(", "x is "])
def test_reading_a_note_is_linear(piece: str) -> None:
    """Issue 22's rule for the extractive reader: a URL's scheme ran `[\\w+.-]*` from every
    word of `a.a.a...` (8 s for 80 KB), so every pattern here is timed at two sizes."""
    from tests.complexity import assert_linear

    assert_linear(lambda size: "- " + piece * (size // len(piece)) + "x\n",
                  lambda text: len(read(text)[0]), 40_000)


def test_a_paragraph_over_a_dash_line_is_a_heading() -> None:
    # CommonMark's setext heading: the whole paragraph, not its last line, and no rule
    sentences, _, headings = read("Two line\ntitle\n---\nBody text.\n")
    assert headings == [(2, "Two line title", 1)]
    assert [(s.line, s.text, s.heading) for s in sentences] == [(4, "Body text.",
                                                                 "Two line title")]


def test_text_form_says_what_notes_counts(vault: Path) -> None:
    from conftest import run_kbase

    proc = run_kbase("concept", "translation lookaside buffer", "--format", "text", cwd=vault)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == (
        "Translation lookaside buffer: documented by OS/Paging.md#Translation lookaside "
        "buffer, discussed in 1 other note")
