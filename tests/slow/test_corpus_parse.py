"""The note parser on the real vaults of ../shared/corpora (skipped when absent): no
note is unreadable, and the wikilinks and embeds found are exactly the counts checked by
hand. The parser's cases are tests/unit/parse/test_parser.py."""

from __future__ import annotations

import pytest

from kbase_ci.parse.parser import parse_note
from tests.conftest import CORPORA

# Exact counts found by this parser (body wikilinks without embeds / wiki embeds);
# MANIFEST.md numbers are approximate (its script skips only fenced code).
_CORPUS_COUNTS = {
    "obsidian-tasks-docs": (1108, 28, 1108),
    "data-engineering-wiki": (303, 56, 302),
    "dnd-5e-srd": (778, 0, 778),
}


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(_CORPUS_COUNTS))
def test_real_corpus(name: str) -> None:
    vault = CORPORA / name / "vault"
    if not vault.is_dir():
        pytest.skip(f"../shared/corpora/{name} is not available")
    wiki = embeds = 0
    for p in sorted(vault.rglob("*.md")):
        note = parse_note(p.relative_to(vault).as_posix(), p.read_bytes())
        assert not [d for d in note.diagnostics if d.code.startswith("KB0")], p
        for ln in note.links:
            if ln.style == "wiki" and ln.frontmatter_key is None:
                embeds += ln.embed
                wiki += not ln.embed
    exact_wiki, exact_embeds, manifest = _CORPUS_COUNTS[name]
    assert (wiki, embeds) == (exact_wiki, exact_embeds)
    assert abs(wiki - manifest) <= 0.03 * manifest
