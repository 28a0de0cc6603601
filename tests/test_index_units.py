"""Tokens, chunks and shard planning: the pure parts of `kbase index`."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from conftest import FIXTURES

from kbase_ci.errors import ConfigError, UsageError
from kbase_ci.index import tokens
from kbase_ci.index.chunks import MAX_CHARS, PACK_CHARS, chunk_note
from kbase_ci.index.shards import DomainRule, plan_shards, slice_shards
from kbase_ci.parse.parser import parse_note
from tests import tables


def _token_cases() -> list[tuple[str, str]]:
    return [(text, " ".join(tables.items(want, " ")))
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
    with pytest.raises(UsageError, match=r"stemmer 'klingon'.*upgrade"):
        tokens.query_terms("x", stem_with="klingon")


def _chunks(text: str, path: str = "n.md") -> list[tuple[tuple[str, ...], int, int]]:
    note = parse_note(path, text.encode())
    return [(c.heading_path, c.start_line, c.end_line)
            for c in chunk_note(note, text.encode())]


def test_small_sections_are_packed_and_named_by_the_first() -> None:
    text = "---\ntitle: x\n---\nintro line\n\n# A\n\nalpha\n\n## B\n\nbeta\n"
    assert _chunks(text) == [((), 4, 12)]


def test_sections_start_new_chunks_when_the_pack_is_full() -> None:
    body = "word " * (PACK_CHARS // 10)
    text = f"# A\n\n{body}\n\n# B\n\n{body}\n\n# C\n\nshort\n"
    assert _chunks(text) == [(("A",), 1, 3), (("B",), 5, 11)]


def test_long_section_splits_at_paragraphs_never_inside_a_fence() -> None:
    para = ("lorem ipsum " * 40).strip()  # ~480 chars
    fence = "```\n" + "\n\n".join(["code line"] * 200) + "\n```"  # blank lines inside
    text = "# Big\n\n" + "\n\n".join([para] * 6) + "\n\n" + fence + "\n\nafter\n"
    got = _chunks(text)
    assert len(got) >= 3
    assert all(h == ("Big",) for h, _, _ in got)
    lines = text.split("\n")
    fence_start = lines.index("```") + 1
    fence_end = len(lines) - 1 - lines[::-1].index("```")
    for _, start, _end in got:
        # A chunk boundary never falls strictly inside the fenced block.
        assert not fence_start < start <= fence_end
    # Consecutive chunks cover the section without overlap.
    assert all(a[2] < b[1] for a, b in pairwise(got))
    note = parse_note("n.md", text.encode())
    for c in chunk_note(note, text.encode()):
        assert len(c.text) <= MAX_CHARS or "```" in c.text


def test_note_without_headings_is_paragraph_chunks() -> None:
    para = "x" * 900
    text = "\n\n".join([para] * 5)
    got = _chunks(text)
    assert [(s, e) for _, s, e in got] == [(1, 3), (5, 7), (9, 9)]


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


def test_encoder_tokens_match_model2vec(tmp_path: Path) -> None:
    import numpy as np
    from indexkit import REAL_MODEL, make_tiny_model
    from model2vec import StaticModel
    from tokenizers import Tokenizer, pre_tokenizers

    from kbase_ci.index.embedder import Embedder

    texts = ["Python, generator! zzz the", "", "ünïcode 日本語 x\u00a0y  tabs\there",
             "python " * 600]
    tiny = make_tiny_model(tmp_path / "tiny")
    # The same vocabulary behind a tokenizer the word cache must not be used for.
    other = make_tiny_model(tmp_path / "metaspace")
    tok = Tokenizer.from_file(str(other / "tokenizer.json"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.save(str(other / "tokenizer.json"))
    cases = [tiny, other]
    if REAL_MODEL.is_dir():
        cases.append(REAL_MODEL)
    for folder in cases:
        e = Embedder(folder)
        ref = StaticModel.from_pretrained(folder)
        assert e.tokenize(texts) == ref.tokenize(texts)
        got = e.encode(texts).astype(np.float64)
        want = np.asarray(ref.encode(texts), dtype=np.float64)
        want /= np.maximum(np.linalg.norm(want, axis=1, keepdims=True), 1e-12)
        assert np.allclose(got, want, atol=2e-3)
