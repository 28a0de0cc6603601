"""Tokens, chunks and shard planning: the pure parts of `kbase index`."""

from __future__ import annotations

from itertools import pairwise

import pytest
from conftest import FIXTURES

from kbase_ci.errors import ConfigError, IndexFormatError, UsageError
from kbase_ci.index import tokens
from kbase_ci.index.chunks import MAX_CHARS, chunk_note, context, embed_text, prose
from kbase_ci.index.shards import DomainRule, plan_shards, slice_shards
from kbase_ci.parse.parser import parse_note
from tests import tables


def _token_cases() -> list[tuple[str, str]]:
    return [(tables.decode(text).decode(), " ".join(tables.items(want, " ")))
            for _no, text, want in tables.arrows(FIXTURES / "index" / "tokens.txt")]


@pytest.mark.parametrize(("text", "want"), _token_cases())
def test_code_aware_tokens(text: str, want: str) -> None:
    assert " ".join(tokens.split(text)) == want


def test_query_terms_are_stemmed_without_stopwords() -> None:
    assert tokens.query_terms("the context managers are running") == ["context", "manag",
                                                                        "run"]
    # A manifest's own stopword list wins over the installed bm25s's.
    assert tokens.query_terms("the context", stop=["context"]) == ["the"]
    # `index.stemmer: none` keeps words as written.
    assert tokens.query_terms("the context managers are running", stem_with="none") == [
        "context", "managers", "running"]
    with pytest.raises(IndexFormatError, match=r"stemmer 'klingon'.*upgrade"):
        tokens.query_terms("x", stem_with="klingon")


def _chunks(text: str, path: str = "n.md") -> list[tuple[tuple[str, ...], int, int]]:
    note = parse_note(path, text.encode())
    return [(c.heading_path, c.start_line, c.end_line)
            for c in chunk_note(note, text.encode())]


def test_chunks_are_paragraphs_and_headings() -> None:
    text = ("---\ntitle: x\n---\nintro line\n\n# n\n\nalpha one\nalpha two\n\n"
            "beta\n\n## B\n\n## C\n\ngamma\n")
    # The H1 repeats the note's title (`n`): no chunk of its own. `## B` has no body
    # but is still a chunk: its words name what follows.
    assert _chunks(text) == [((), 4, 4), (("n",), 8, 9), (("n",), 11, 11),
                             (("n", "B"), 13, 13), (("n", "C"), 15, 15),
                             (("n", "C"), 17, 17)]


def test_code_joins_the_paragraph_it_follows() -> None:
    text = ("# tar\n\n> Archiving utility.\n\n- Extract an archive:\n\n`tar xf a.tar`\n\n"
            "- List it:\n\n```sh\ntar tf a.tar\n\ntar tvf a.tar\n```\n")
    note = parse_note("tar.md", text.encode())
    got = chunk_note(note, text.encode())
    assert [(c.start_line, c.end_line) for c in got] == [(3, 3), (5, 7), (9, 15)]
    # The model reads the prose: code says little to it and drowned the description.
    assert [embed_text(note.title, c) for c in got] == [
        "> Archiving utility.", "- Extract an archive:", "- List it:"]
    code_only = "# Notes\n\n## Run\n\n```\nmake all\n```\n"
    note = parse_note("notes.md", code_only.encode())
    assert [embed_text(note.title, c) for c in chunk_note(note, code_only.encode())] == [
        "Run\nRun", "Run\n```\nmake all\n```"]


def test_a_fence_stays_whole_and_long_paragraphs_are_cut_between_lines() -> None:
    fence = "```\n" + "\n\n".join(["code line"] * 300) + "\n```"  # blank lines inside
    items = "\n".join(f"- item {i} " + "word " * 20 for i in range(40))  # one long list
    text = "# Big\n\n" + fence + "\n\n" + items + "\n"
    got = _chunks(text, "big.md")
    lines = text.split("\n")
    fence_end = len(lines) - lines[::-1].index("```")  # its 1-based line
    assert got[0] == (("Big",), 3, fence_end)  # never cut inside a fence
    rest = got[1:]
    assert len(rest) >= 3 and all(a[2] + 1 == b[1] for a, b in pairwise(rest))
    note = parse_note("big.md", text.encode())
    assert all(len(c.text) <= MAX_CHARS for c in chunk_note(note, text.encode())[1:])


def test_setext_headings_and_notes_without_headings() -> None:
    text = "Title\n=====\n\nbody\n\nSub\n---\n\nmore\n"
    assert _chunks(text) == [(("Title",), 1, 2), (("Title",), 4, 4),
                             (("Title", "Sub"), 6, 7), (("Title", "Sub"), 9, 9)]
    para = "x" * 900
    assert [(s, e) for _, s, e in _chunks("\n\n".join([para] * 3))] == [(1, 1), (3, 3),
                                                                        (5, 5)]


def test_heading_context_drops_a_first_heading_that_repeats_the_title() -> None:
    assert context("ip-netconf", ("ip netconf", "Usage")) == "Usage"
    assert context("Notes", ("Other", "Usage")) == "Other / Usage"
    assert context("Notes", ()) == ""
    assert prose("- Extract:\n`tar xf a`\n```\nx\n```\nafter") == "- Extract:\nafter"


def test_plan_splits_large_domains_by_path_hash_stably() -> None:
    rule = DomainRule.parse("folder")
    notes = [(f"A/n{i}.md", 100, "A") for i in range(40)] + [("top.md", 10, "")]
    plan = plan_shards(notes, rule, max_bytes=1500)
    ids = [s.id for s in plan]
    assert ids[0] == "_root"
    a_parts = [s for s in plan if s.domain == "A"]
    assert len(a_parts) == 4 and all(s.id.endswith("of4") for s in a_parts)
    assert sorted(p for s in a_parts for p in s.notes) == sorted(n[0] for n in notes[:40])
    # Adding a note changes only the part it lands in.
    plan2 = plan_shards([*notes, ("A/new.md", 5, "A")], rule, max_bytes=1500)
    changed = [s.id for s, t in zip(plan, plan2, strict=True) if s.notes != t.notes]
    assert len(changed) == 1


def test_slices_cover_the_plan_once() -> None:
    rule = DomainRule.parse("folder")
    notes = [(f"D{i % 5}/n{i}.md", 100 + i, f"D{i % 5}") for i in range(50)]
    plan = plan_shards(notes, rule, max_bytes=10_000)
    got = [s.id for k in (1, 2, 3) for s in slice_shards(plan, k, 3)]
    assert sorted(got) == sorted(s.id for s in plan)


def test_domain_rules() -> None:
    fm = DomainRule.parse("frontmatter:type")
    assert fm.domain("a/b.md", {"type": "project"}) == "project"
    assert fm.domain("a/b.md", {"type": ["area", "x"]}) == "area"
    assert fm.domain("a/b.md", {}) == ""
    assert DomainRule.parse("folder").domain("a/b/c.md") == "a"
    with pytest.raises(ConfigError, match=r"index\.domain"):
        DomainRule.parse("tags")


def test_slice_syntax() -> None:
    from kbase_ci.index.shards import parse_slice

    assert parse_slice("2/4") == (2, 4)
    for bad in ("0/3", "4/3", "x", "1/0"):
        with pytest.raises(UsageError):
            parse_slice(bad)
