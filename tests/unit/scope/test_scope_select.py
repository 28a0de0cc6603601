"""Which notes a scope holds (kbase_ci.scope.select): each selector kind on one note
(fixtures/scope/selectors.txt), then a spec over a vault: includes, excludes, and the
hint for every selector that matched nothing."""

from __future__ import annotations

import pytest

from kbase_ci.parse.parser import parse_note
from kbase_ci.scope.select import NoteFacts, Unmatched, matches, select, selected
from kbase_ci.vault.scopeconfig import ScopeSpec
from tests import tables
from tests.conftest import FIXTURES

TABLE = FIXTURES / "scope" / "selectors.txt"


def _cell(text: str) -> str:
    return "" if text == tables.NONE else text


def _many(text: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in text.split(",")) if text != tables.NONE else ()


def _cases() -> list[object]:
    out = []
    for no, given, expected in tables.arrows(TABLE):
        selector, path, title, aliases, tags, domain, kind = given.split(tables.CELL)
        sel_kind, _, value = selector.partition(": ")
        note = NoteFacts(path, title, _many(aliases), _many(tags), _cell(domain), _cell(kind))
        assert expected in ("yes", "no"), f"selectors.txt:{no}: yes or no, not {expected}"
        out.append(pytest.param((sel_kind, value), note, expected == "yes", id=str(no)))
    return out


@pytest.mark.parametrize(("selector", "note", "expected"), _cases())
def test_selector(selector: tuple[str, str], note: NoteFacts, expected: bool) -> None:
    assert matches(selector, note) is expected


def _note(path: str, *tags: str, domain: str = "", kind: str = "", title: str = "") -> NoteFacts:
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    return NoteFacts(path, title or stem, (), tags, domain, kind)


VAULT = [
    _note("rust/Ownership.md", "rust/memory", domain="rust", kind="concept"),
    _note("rust/async/Tokio.md", "rust/async", domain="rust", kind="concept"),
    _note("rust/drafts/Pinning.md", "rust", "draft", domain="rust"),
    _note("python/GIL.md", "python", domain="python", kind="concept"),
    _note("Home.md"),
]


def test_includes_minus_excludes_sorted() -> None:
    spec = ScopeSpec.from_pairs([("domain", "rust"), ("note", "GIL")],
                                [("tag", "draft")])
    got = select(spec, reversed(VAULT))
    assert got.paths == ("python/GIL.md", "rust/Ownership.md", "rust/async/Tokio.md")
    assert got.unmatched == ()
    assert selected(spec, VAULT[0]) and not selected(spec, VAULT[2])


def test_every_selector_that_matched_nothing_says_what_exists() -> None:
    spec = ScopeSpec.from_pairs(
        [("tag", "rust/memroy"), ("path", "zzzzzz/**"), ("type", "nope"), ("domain", "go"),
         ("note", "Tokio")],
        [("type", "decision")])
    got = select(spec, VAULT)
    assert got.paths == ("rust/async/Tokio.md",)
    assert {u.selector: (u.side, u.hint) for u in got.unmatched} == {
        "tag: rust/memroy": ("include", "did you mean `tag: rust/memory`, `tag: rust/async`, "
                                        "`tag: rust`?"),
        "path: zzzzzz/**": ("include", "path globs are relative to the vault root; `*` stays "
                                   "in one folder, `**` crosses folders"),
        "type: nope": ("include", "known type values: concept"),
        "domain: go": ("include", "known domain values: , python, rust"),
        "type: decision": ("exclude", "known type values: concept"),
    }


def test_no_note_has_the_kind_at_all() -> None:
    got = select(ScopeSpec.from_pairs([("type", "concept")], []), [_note("a.md")])
    assert got.paths == () and got.unmatched == (
        Unmatched("include", "type: concept", "no note has a type"),)


def test_facts_of_a_fresh_parse() -> None:
    note = parse_note("rust/Own.md", b"---\ntype: concept\naliases: [Owning]\n---\n"
                                     b"# Ownership\n\n#rust/memory #rust #rust/memory\n")
    facts = NoteFacts.from_parsed(note, "rust")
    assert facts == NoteFacts("rust/Own.md", "Own", ("Owning",),
                              ("rust", "rust/memory"), "rust", "concept")
    odd = parse_note("a.md", b"---\ntype: [not, a, string]\n---\n# A\n")
    assert NoteFacts.from_parsed(odd, "").type == ""
