"""Link resolution: the conformance table (fixtures/resolution/cases.txt) plus anchor units."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from kbase_ci.parse.anchors import (
    HeadingIndex,
    find_block,
    github_slug,
    github_slugs,
    normalize_heading,
)
from kbase_ci.parse.linksyntax import link_from_raw
from kbase_ci.parsed import BlockId, Heading, Link, ParsedNote
from kbase_ci.vault.resolver import ResolvedLink, Resolver
from tests import tables
from tests.conftest import REPO

FIXTURES = REPO / "fixtures" / "resolution"


def _headings(spec: str) -> tuple[Heading, ...]:
    """`# Intro; ## Setup` -> Headings with `parents` derived from the levels."""
    out: list[Heading] = []
    stack: list[Heading] = []
    for i, item in enumerate(s.strip() for s in spec.split(";")):
        level = len(item) - len(item.lstrip("#"))
        text = item[level:].strip()
        while stack and stack[-1].level >= level:
            stack.pop()
        heading = Heading(level, text, i + 1, tuple(h.text for h in stack))
        out.append(heading)
        stack.append(heading)
    return tuple(out)


def _csv(spec: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in spec.split(",") if s.strip())


def load_vault(path: Path) -> tuple[list[ParsedNote], list[str]]:
    notes: list[ParsedNote] = []
    files: list[str] = []
    for _no, fields in tables.cells(path):
        file = fields[0]
        files.append(file)
        if not file.endswith(".md"):
            assert len(fields) == 1, f"attachment with fields: {fields!r}"
            continue
        parts: dict[str, str] = {}
        for field in fields[1:]:
            name, sep, value = field.partition(":")
            assert sep and name in ("headings", "blocks", "aliases"), f"bad field {field!r}"
            parts[name] = value
        notes.append(ParsedNote(
            path=file,
            title=file.rpartition("/")[2][:-3],
            aliases=_csv(parts.get("aliases", "")),
            headings=_headings(parts["headings"]) if "headings" in parts else (),
            block_ids=tuple(BlockId(b, 1) for b in _csv(parts.get("blocks", ""))),
        ))
    return notes, files


@dataclass(frozen=True)
class Case:
    line: int
    source: str
    raw: str
    target: str | None
    status: str
    anchor: bool | None
    via: str | None
    ambiguous: bool


def load_cases(path: Path) -> list[Case]:
    cases: list[Case] = []
    for n, fields in tables.cells(path):
        assert len(fields) >= 6, f"line {n}: needs 6 fields: {fields!r}"
        source, link = fields[0], tables.CELL.join(fields[1:-4])
        target, status, anchor, flags = fields[-4:]
        flag_set = set(_csv(flags)) - {"-"}
        via = next((f[4:] for f in flag_set if f.startswith("via=")), None)
        assert flag_set <= {"ambiguous", f"via={via}"}, f"line {n}: unknown flag in {flags!r}"
        assert anchor in ("found", "missing", "-"), f"line {n}: bad anchor {anchor!r}"
        cases.append(Case(n, source, link, None if target == "-" else target, status,
                          {"found": True, "missing": False}.get(anchor), via,
                          "ambiguous" in flag_set))
    return cases


NOTES, FILES = load_vault(FIXTURES / "vault.txt")
CASES = load_cases(FIXTURES / "cases.txt")
# `files` is every tracked file, notes included, as `git ls-files` gives it.
RESOLVER = Resolver(NOTES, FILES)


def test_table_is_large_enough() -> None:
    assert len(CASES) >= 80


def test_case_sources_are_vault_notes() -> None:
    paths = {n.path for n in NOTES}
    assert [c.line for c in CASES if c.source not in paths] == []


@pytest.mark.parametrize("case", CASES, ids=[f"line{c.line}" for c in CASES])
def test_conformance(case: Case) -> None:
    link = link_from_raw(case.raw)
    got = RESOLVER.resolve(case.source, link)
    assert (got.target, got.status, got.anchor_found) == (case.target, case.status, case.anchor)
    if case.via is not None:
        assert got.via == case.via
    assert got.ambiguous == case.ambiguous, got.candidates
    if got.ambiguous:
        assert got.target in got.candidates
        assert list(got.candidates) == sorted(got.candidates)
    if got.status != "ok":
        assert got.via is None and got.candidates == ()


# -- anchors.py --------------------------------------------------------------------

@pytest.mark.parametrize(("text", "key"), [
    ("Step 1: Install", "step 1 install"),
    ("C# Basics", "c basics"),
    ("Pipe|Dream", "pipe dream"),
    ("x^2 growth", "x 2 growth"),
    ("Setup [beta]", "setup beta"),
    ("100% done", "100 done"),
    ("  Many \t  spaces  ", "many spaces"),
    # Rule 1 and 2: every punctuation character of the list becomes a space.
    ("What is it?", "what is it"),
    ("`run()`", "run"),
    ("R&D budget", "r d budget"),
    ("A/B testing", "a b testing"),
    ("A:B", "a b"),
    ("wifi 2.4 vs 5.0", "wifi 2 4 vs 5 0"),
    ('!"#$%&()*+,.:;<=>?@[\\]^`{|}~/', ""),
    ("line\nbreak\rhere", "line break here"),
    # ...and `_ - '` and non-ASCII punctuation stay.
    ("snake_case - it's «fine»", "snake_case - it's «fine»"),
    # Rule 10: toLowerCase, not casefold.
    ("Straße", "straße"),
    ("ΣΟΦΟΣ", "σοφος"),
    ("Ünïcode", "ünïcode"),
    ("Unicode\u0308", "unicodë"),  # decomposed input composes (NFC)
    ("a - b", "a - b"),
])
def test_normalize_heading(text: str, key: str) -> None:
    assert normalize_heading(text) == key


@pytest.mark.parametrize(("text", "slug"), [
    ("Step 1: Install", "step-1-install"),
    ("C# Basics", "c-basics"),
    ("Q&A: What's new?", "qa-whats-new"),
    ("snake_case and-dash", "snake_case-and-dash"),
    ("Many   spaces", "many---spaces"),
    ("Ünïcode Heading", "ünïcode-heading"),
    ("Emoji 🎉 party", "emoji--party"),
    ("See [the docs](https://x.io/a.md) now", "see-the-docs-now"),
    ("`code` <em>here</em>", "code-here"),
])
def test_github_slug(text: str, slug: str) -> None:
    assert github_slug(text) == slug


def test_github_slugs_number_duplicates_like_github() -> None:
    assert github_slugs(["Setup", "Setup", "Usage", "Setup"]) == [
        "setup", "setup-1", "usage", "setup-2"]
    # A heading already named `a-1` pushes the second `a` on to `a-2`.
    assert github_slugs(["a", "a-1", "a"]) == ["a", "a-1", "a-2"]


HEADINGS = (
    Heading(1, "Intro", 1),
    Heading(2, "Setup", 2, ("Intro",)),
    Heading(3, "Linux", 3, ("Intro", "Setup")),
    Heading(1, "Usage", 4),
    Heading(2, "Setup", 5, ("Usage",)),
)


def test_find_heading_path_is_the_next_deeper_heading_after_the_match() -> None:
    # Rule 3: `Child` is the next heading deeper than `Alpha` after it, though it sits
    # in `Beta`'s section; a heading of Alpha's level or higher does not qualify.
    flat = (Heading(1, "Alpha", 1), Heading(1, "Beta", 2), Heading(2, "Child", 3, ("Beta",)),
            Heading(1, "Peer", 4))
    index = HeadingIndex(flat)
    assert index.find(["Alpha", "Child"], markdown=False) == flat[2]
    assert index.find(["Alpha", "Beta"], markdown=False) is None
    assert index.find(["Alpha", "Peer"], markdown=False) is None
    assert index.find(["Child", "Peer"], markdown=False) is None
    assert index.find(["Beta", "Child"], markdown=False) == flat[2]


def test_find_heading_nested_at_any_depth() -> None:
    assert HeadingIndex(HEADINGS).find(["Intro", "Linux"], markdown=False) == HEADINGS[2]
    assert HeadingIndex(HEADINGS).find(["usage", "SETUP"], markdown=False) == HEADINGS[4]
    assert HeadingIndex(HEADINGS).find(["Setup"], markdown=False) == HEADINGS[1]
    assert HeadingIndex(HEADINGS).find(["Usage", "Linux"], markdown=False) is None
    assert HeadingIndex(HEADINGS).find(["Linux", "Intro"], markdown=False) is None
    assert HeadingIndex(HEADINGS).find([], markdown=False) is None


def test_find_heading_slugs_only_for_markdown() -> None:
    assert HeadingIndex(HEADINGS).find(["setup-1"], markdown=True) == HEADINGS[4]
    assert HeadingIndex(HEADINGS).find(["setup-1"], markdown=False) is None
    assert HeadingIndex(HEADINGS).find(["intro", "linux"], markdown=True) == HEADINGS[2]
    assert HeadingIndex(HEADINGS).find(["usage", "setup"], markdown=True) == HEADINGS[4]


def test_find_block() -> None:
    blocks = (BlockId("abc1", 3), BlockId("Para-2", 9))
    assert find_block(blocks, "abc1") == blocks[0]
    assert find_block(blocks, "^abc1") == blocks[0]
    assert find_block(blocks, "para-2") == blocks[1]
    assert find_block(blocks, "abc") is None


# -- Resolver API ------------------------------------------------------------------

def test_alias_collisions() -> None:
    assert RESOLVER.alias_collisions() == [
        ("Alpha", ("notes/Alpha.md", "notes/Beta.md")),
        ("Shared Topic", ("Home.md", "notes/Beta.md")),
    ]


def test_alias_equal_to_own_name_is_not_a_collision() -> None:
    notes = [ParsedNote("AI.md", "AI", aliases=("ai", "AI")), ParsedNote("b/B.md", "B")]
    assert Resolver(notes).alias_collisions() == []


def test_aliases_can_be_switched_off() -> None:
    resolver = Resolver(NOTES, FILES, resolve_aliases=False)
    got = resolver.resolve("Home.md", link_from_raw("[[First Letter]]"))
    assert (got.status, got.target) == ("unresolved", None)
    # Names still resolve: the switch only drops rule 7.
    assert resolver.resolve("Home.md", link_from_raw("[[Alpha]]")).target == "notes/Alpha.md"


def test_lookup_resolves_bare_names_aliases_and_paths() -> None:
    assert RESOLVER.lookup("alpha").target == "notes/Alpha.md"
    assert RESOLVER.lookup("First Letter").via == "alias"
    assert RESOLVER.lookup("notes/sub/Gamma.md").via == "path"
    hit = RESOLVER.lookup("Alpha#Usage")
    assert (hit.target, hit.anchor_found) == ("notes/Alpha.md", True)
    assert RESOLVER.lookup("Log", source="work/Todo.md").target == "work/Log.md"
    assert RESOLVER.lookup("nothing here").status == "unresolved"
    assert RESOLVER.lookup("#Intro").status == "unresolved"


def test_resolve_all_and_note() -> None:
    links = (link_from_raw("[[Beta]]", 3, 1), link_from_raw("[x](https://e.org)", 4, 1))
    note = ParsedNote("notes/Alpha.md", "Alpha", links=links)
    got = Resolver([*NOTES[1:], note], FILES).resolve_all(note)
    assert [(r.link.line, r.status, r.target) for r in got] == [
        (3, "ok", "notes/Beta.md"), (4, "external", None)]
    assert RESOLVER.note("notes/Alpha.md") is not None
    assert RESOLVER.note("notes/alpha.md") is None


def test_case_only_duplicates_prefer_exact_spelling() -> None:
    notes = [ParsedNote("a/Note.md", "Note"), ParsedNote("a/note.md", "note")]
    resolver = Resolver(notes)
    got = resolver.resolve("x.md", link_from_raw("[[a/note]]"))
    assert (got.target, got.candidates) == ("a/note.md", ("a/Note.md", "a/note.md"))


def test_decomposed_file_names_match_composed_links() -> None:
    resolver = Resolver([ParsedNote("Cafe\u0301.md", "Cafe\u0301")])
    assert resolver.resolve("x.md", link_from_raw("[[Caf\u00e9]]")).target == "Cafe\u0301.md"


def test_resolved_link_is_a_frozen_record() -> None:
    got = RESOLVER.resolve("Home.md", link_from_raw("[[Log]]"))
    assert isinstance(got, ResolvedLink) and got.ambiguous
    with pytest.raises(AttributeError):
        got.target = None  # type: ignore[misc]


def test_synthetic_10k_vault_resolves_correctly() -> None:
    n = 10_000
    notes: list[ParsedNote] = []
    for i in range(n):
        folder = f"f{i % 50}"
        links = (
            Link("wiki", False, f"[[N{(i + 1) % n}]]", f"N{(i + 1) % n}", "", None, 1, 1),
            Link("wiki", False, f"[[n{(i + 7) % n}#H{(i + 7) % n}]]", f"n{(i + 7) % n}",
                 f"H{(i + 7) % n}", None, 2, 1),
            Link("markdown", False, "[x](../f0/N0.md)", "../f0/N0.md", "", "x", 3, 1),
            Link("wiki", False, f"[[alias {(i + 3) % n}]]", f"alias {(i + 3) % n}", "",
                 None, 4, 1),
            Link("wiki", False, "[[Dup]]", "Dup", "", None, 5, 1),
            Link("wiki", False, f"[[Missing {i}]]", f"Missing {i}", "", None, 6, 1),
        )
        notes.append(ParsedNote(f"{folder}/N{i}.md", f"N{i}", aliases=(f"Alias {i}",),
                                headings=(Heading(1, f"H{i}", 1),), links=links))
    notes += [ParsedNote("f1/Dup.md", "Dup"), ParsedNote("f2/Dup.md", "Dup")]
    resolver = Resolver(notes, [f"img/{i}.png" for i in range(n)])
    results = [r for note in notes[:n] for r in resolver.resolve_all(note)]
    assert len(results) == 6 * n
    by_line: dict[int, list[ResolvedLink]] = {}
    for r in results:
        by_line.setdefault(r.link.line, []).append(r)
    assert all(r.target == f"f{(i + 1) % n % 50}/N{(i + 1) % n}.md"
               for i, r in enumerate(by_line[1]))
    assert all(r.anchor_found is True for r in by_line[2])
    assert {r.target for r in by_line[3]} == {"f0/N0.md"}
    assert all(r.via == "alias" and r.target == f"f{(i + 3) % n % 50}/N{(i + 3) % n}.md"
               for i, r in enumerate(by_line[4]))
    assert all(r.ambiguous for r in by_line[5])
    assert {r.target for r in by_line[5] if r.source.startswith("f2/")} == {"f2/Dup.md"}
    assert {r.status for r in by_line[6]} == {"unresolved"}
