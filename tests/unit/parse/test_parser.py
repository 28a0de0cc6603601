"""The note parser, driven by the tables under fixtures/parser/ (one case per line).

Table syntax (shared by every file there):
  input ⇒ expected        `#` at line start is a comment; blank lines are skipped.
In inputs: ↵ = newline, → = tab, {N×text} = text repeated N times, \\xNN = that byte,
and a leading `@max=N ` passes max_bytes=N. Expected items are separated by ` ; `.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from kbase_ci.parse.linksyntax import link_from_raw, wikilink_spans
from kbase_ci.parse.parser import parse_note
from kbase_ci.parse.yamlload import has_clib
from kbase_ci.parsed import ParsedNote
from tests import tables
from tests.conftest import REPO

TABLES = REPO / "fixtures" / "parser"

_ITEM_SEP = " ; "


def _input(spec: str) -> tuple[bytes, int]:
    max_bytes = 8_000_000
    m = re.match(r"@max=(\d+) ", spec)
    if m:
        max_bytes, spec = int(m.group(1)), spec[m.end():]
    return tables.decode(spec), max_bytes


def _cases(name: str) -> Iterator[Any]:
    for no, given, expected in tables.arrows(TABLES / name):
        yield pytest.param(given, expected, id=f"{name}:{no}")


def _parse(given: str, path: str = "Note.md") -> ParsedNote:
    data, max_bytes = _input(given)
    return parse_note(path, data, max_bytes=max_bytes)


def _found(note: ParsedNote) -> str:
    """Every body link and inline tag as `line:col raw`, in document order."""
    items = [(ln.line, ln.col, ln.raw) for ln in note.links if ln.frontmatter_key is None]
    items += [(t.line, t.col, "#" + t.name) for t in note.tags if t.source == "inline"]
    return _ITEM_SEP.join(f"{a}:{b} {raw}" for a, b, raw in sorted(items)) or "-"


# ---------------------------------------------------------------- link syntax ----

@pytest.mark.parametrize(("given", "expected"), list(_cases("linksyntax.txt")))
def test_link_syntax(given: str, expected: str) -> None:
    link = link_from_raw(given, 3, 7)
    got = [link.style, link.embed, link.target, link.subpath, link.alias, link.external]
    assert got == json.loads(expected)
    assert (link.raw, link.line, link.col) == (given, 3, 7)


def test_link_syntax_rejects_non_links() -> None:
    from kbase_ci.errors import UsageError
    for bad in ("plain", "[[]", "[a]", "(x)"):
        with pytest.raises(UsageError):
            link_from_raw(bad)


def test_wikilink_spans_linear_on_unclosed_brackets() -> None:
    assert wikilink_spans("[[" * 200_000) == []
    assert wikilink_spans("[[a]]\n[[b\n]] [[c]]") == [(0, 5), (13, 18)]


# ------------------------------------------------------- links, tags, exclusions ----

@pytest.mark.parametrize(("given", "expected"),
                         [*_cases("links.txt"), *_cases("tags.txt"), *_cases("exclusions.txt")])
def test_found(given: str, expected: str) -> None:
    assert _found(_parse(given)) == expected


# ------------------------------------------------------------ headings, blocks ----

def _headings(note: ParsedNote) -> str:
    out = []
    for h in note.headings:
        parents = " {" + " / ".join(h.parents) + "}" if h.parents else ""
        out.append(f"{h.line} h{h.level} {h.text}{parents}")
    return _ITEM_SEP.join(out) or "-"


@pytest.mark.parametrize(("given", "expected"), list(_cases("headings.txt")))
def test_headings(given: str, expected: str) -> None:
    assert _headings(_parse(given)) == expected


@pytest.mark.parametrize(("given", "expected"), list(_cases("blocks.txt")))
def test_block_ids(given: str, expected: str) -> None:
    got = _ITEM_SEP.join(f"{b.id}@{b.line}" for b in _parse(given).block_ids) or "-"
    assert got == expected


# ----------------------------------------------------- frontmatter, bad input ----

def _check(note: ParsedNote, key: str, value: str) -> None:
    if key == "data":
        assert note.frontmatter == json.loads(value)
    elif key == "aliases":
        assert list(note.aliases) == json.loads(value)
    elif key == "tags":
        got = [[t.line, t.col, t.name] for t in note.tags if t.source == "frontmatter"]
        assert got == json.loads(value)
    elif key == "links":
        got = [[ln.line, ln.col, ln.frontmatter_key, ln.raw] for ln in note.links
               if ln.frontmatter_key is not None]
        assert got == json.loads(value)
    elif key == "diag":
        diags = [f"{d.code}@{d.line}:{d.col} {d.severity}" for d in note.diagnostics]
        assert diags == ([] if value == "-" else value.split(", "))
    elif key == "found":
        assert _found(note) == value.replace(" , ", _ITEM_SEP)
    elif key in ("end", "lines", "size"):
        field = {"end": "frontmatter_end"}.get(key, key)
        assert getattr(note, field) == int(value)
    elif key == "headings":
        assert _headings(note) == value.replace(" , ", _ITEM_SEP)
    elif key == "title":
        assert note.title == value
    else:
        raise AssertionError(f"unknown expectation {key!r}")


@pytest.mark.parametrize(("given", "expected"),
                         [*_cases("frontmatter.txt"), *_cases("bad_input.txt")])
def test_expectations(given: str, expected: str) -> None:
    note = _parse(given)
    for item in expected.split(_ITEM_SEP):
        key, _, value = item.partition("=")
        _check(note, key.strip(), value.strip())
    assert ParsedNote.from_json(json.loads(json.dumps(note.to_json()))) == note


# ----------------------------------------------------------------- properties ----

def test_title_and_path() -> None:
    note = parse_note("a/b/My Note.md", b"x")
    assert (note.path, note.title, note.size, note.lines) == ("a/b/My Note.md", "My Note", 1, 1)
    assert parse_note("x/README.MD", b"").title == "README"


def test_links_sorted_by_position() -> None:
    data = b"---\nup: '[[F]]'\n---\n| [[c]] | [[d]] |\n|---|---|\n\n[[a]] [b](b.md) ![[e]]\n"
    note = parse_note("n.md", data)
    assert [ln.raw for ln in note.links] == ["[[F]]", "[[c]]", "[[d]]", "[[a]]", "[b](b.md)",
                                            "![[e]]"]
    positions = [(ln.line, ln.col) for ln in note.links]
    assert positions == sorted(positions)


def test_link_fields_from_parse() -> None:
    note = parse_note("n.md", "> x [[Ünï#Sub#Deep|al|ias]] ![[p.png|200]] [t](<a b.md#c%20d>)"
                      .encode())
    wiki, embed, md = note.links
    assert (wiki.target, wiki.subpath, wiki.alias, wiki.heading_path) == (
        "Ünï", "Sub#Deep", "al|ias", ("Sub", "Deep"))
    assert (embed.embed, embed.target, embed.alias) == (True, "p.png", "200")
    assert (md.style, md.target, md.subpath, md.alias) == ("markdown", "a b.md", "c d", "t")


def test_clib_is_used() -> None:
    assert has_clib(), "ruamel.yaml.clib missing: frontmatter parsing is 3x slower"


def test_deeply_indented_list_has_exact_columns() -> None:
    data = "".join("  " * i + f"- item [[l{i}]]\n" for i in range(2000)).encode()
    links = parse_note("deep.md", data).links
    assert len(links) == 2000
    assert [(ln.line, ln.col) for ln in links[::500]] == [(1, 8), (501, 1008), (1001, 2008),
                                                          (1501, 3008)]


def test_parser_is_reusable_after_bad_input() -> None:
    for data in (b"\xff\xfe\x00", b"---\na: [\n---\n", b"[[" * 1000):
        parse_note("x.md", data)
    assert [ln.raw for ln in parse_note("y.md", b"[[ok]]").links] == ["[[ok]]"]


def test_yaml_escapes_of_lone_surrogates_become_replacement_characters() -> None:
    # `"\udcff"` is valid YAML and loads as a lone surrogate, which no UTF-8 writer (the
    # parse cache, JSON output, a terminal) can encode; the note's text must not crash them.
    data = (b'---\ntitle: "\\udcff"\naliases: ["\\ud800x"]\ntags: ["\\ud800"]\n'
            b'"\\udfff": 1\nok: "\\ud83d\\ude00"\n---\n')
    note = parse_note("s.md", data)
    json.dumps(note.to_json(), ensure_ascii=False).encode("utf-8")
    assert note.frontmatter["title"] == "\ufffd"
    assert note.aliases == ("\ufffdx",)
    assert note.frontmatter["\ufffd"] == 1
    assert note.frontmatter["ok"] == "\U0001f600"  # an escaped pair is one character


_PIECES = ["[[a]]", "![[b.png|9]]", "[[c#h|x]]", "[t](d.md)", "#tag", "#1", "`", "``", "%%",
           "<!--", "-->", "<b>", "$", "$$", "\\", "> ", "- ", "1. ", "# ", "```", "    ",
           "| x |", "|---|", "^id", "é", "😀", "日本", " ", " ", "\n", "\n", "\r\n", "word",
           "---", "[", "]", "(", ")", "*", "_", "~~", "&amp;", "http://x/#f", "\t"]


def test_random_markdown_positions_point_at_the_raw_text() -> None:
    """Seeded fuzz: never raises, and every position points at what was recorded there."""
    rng = random.Random(1234)
    for _ in range(400):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 80)))
        note = parse_note("f.md", text.encode())
        lines = text.replace("\r\n", "\n").split("\n")
        for ln in note.links:
            assert lines[ln.line - 1][ln.col - 1:].startswith(ln.raw.split("\n")[0]), (text, ln)
        for t in note.tags:
            assert lines[t.line - 1][t.col - 1:].startswith("#" + t.name), (text, t)
        for b in note.block_ids:
            assert "^" + b.id in lines[b.line - 1], (text, b)
        assert [ln.line for ln in note.links] == sorted(ln.line for ln in note.links)


def test_random_bytes_never_raise() -> None:
    rng = random.Random(99)
    for _ in range(300):
        data = bytes(rng.choice(b"[]#%`<>$\\!|^-\n\r \xff\xc3\xa9ax") for _ in range(200))
        note = parse_note("r.md", data)
        json.dumps(note.to_json())
