"""The plain-YAML reader against ruamel, the reader it stands in for: on every case it
answers it must give exactly ruamel's data, and it must leave everything else to ruamel
(a fixture table, generated frontmatter, and every frontmatter block of the shared
vaults: tests/slow/test_plainyaml_corpora.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from kbase_ci.parse.plainyaml import load_plain
from kbase_ci.parse.yamlload import load_yaml, to_json_safe
from tests import tables
from tests.complexity import assert_linear

_TABLE = Path(__file__).resolve().parents[3] / "fixtures" / "parser" / "plainyaml.txt"
_C, _PURE = YAML(typ="safe"), YAML(typ="safe", pure=True)


def ruamel_data(raw: str) -> object:
    """What load_yaml's ruamel path makes of `raw` (the C parser, the pure one when it
    fails), or the name of the error both raise."""
    try:
        loaded = _C.load(raw)
    except Exception:
        try:
            loaded = _PURE.load(raw)
        except Exception as exc:
            return type(exc).__name__
    return to_json_safe(loaded)


@pytest.mark.parametrize(("no", "given", "expected"), tables.arrows(_TABLE))
def test_plain_frontmatter_reads_as_ruamel_does(no: int, given: str, expected: str) -> None:
    raw = tables.decode(given).decode("utf-8")
    got = load_plain(raw)
    assert ("plain" if got is not None else "ruamel") == expected, f"line {no}"
    if got is not None:
        assert got == ruamel_data(raw)
        assert load_yaml(raw) == (got, None)


@pytest.mark.parametrize("line", ["k: a{}!", "k: [a{}b]", "k: a{}é", "k: [a{},b]",
                                  "k a{}b: c", "k: 'a{}b", 'k: "{}\\', "k: |↵ {}↵  x"])
def test_long_runs_of_spaces_cost_linear_time(line: str) -> None:
    # A word may hold spaces and so may what follows it: `word *` tried every split of
    # a run of spaces (100k spaces in one note's frontmatter: 56 s of `kbase check`).
    line = line.replace("↵", "\n")
    assert_linear(lambda n: line.format(" " * n), load_plain, 200_000)


def test_escapes_in_a_long_quoted_string_cost_linear_time() -> None:
    assert_linear(lambda n: 'k: "' + "\\n" * n + '"', load_plain, 100_000)


# Generated frontmatter: the shapes the reader takes, written with the characters that
# change their meaning (`#`, `:`, quotes, brackets, dashes, digits, dots, spaces).
_CHARS = [*"ab Z09-_.:#'\"[]{},&*!|>%@`?~/\\é", "  ", "😀", "1.5", "2024-01-02", "true",
          "null", "- ", ": ", " #"]
_text = st.one_of(
    st.sampled_from(["a", "b c", "Word two", "x-y_z", "1", "-2", "0.5", "é", "a/b", ""]),
    st.lists(st.sampled_from(_CHARS), max_size=6).map("".join))
_key = st.one_of(st.sampled_from(["a", "b", "tags", "a b", "x-y", "é", "k.1", "2"]),
                 st.lists(st.sampled_from(list("ab_-. :#0é")), min_size=1, max_size=5)
                 .map("".join))


def _scalar(draw: st.DrawFn) -> str:
    text = draw(_text)
    form = draw(st.sampled_from(["plain", "plain", "single", "double", "flow"]))
    if form == "single":
        return "'" + text.replace("'", "''") + "'"
    if form == "double":
        return '"' + text.replace("\\", draw(st.sampled_from(["\\\\", "\\n", "\\x41",
                                                                "\\u00e9", "\\"])))\
            .replace('"', '\\"') + '"'
    if form == "flow":
        return "[" + draw(st.sampled_from([", ", ",", " , "])).join(
            draw(st.lists(_text, max_size=3))) + "]"
    return text


def _node(draw: st.DrawFn, col: int, depth: int) -> list[str]:
    """The rest of a `key:` line at column `col`, then the lines under it."""
    kinds = ["scalar", "scalar", "block", "map", "seq"] if depth < 3 else ["scalar", "block"]
    kind = draw(st.sampled_from(kinds))
    comment = draw(st.sampled_from(["", "", " # c", "  #x"]))
    if kind == "scalar":
        return [" " + _scalar(draw) + comment]
    if kind == "block":
        indent = " " * (col + draw(st.integers(1, 3)))
        head = draw(st.sampled_from(["|", "|-", "|+", ">", ">-", ">+"]))
        body = [indent + t if t.strip() else "" for t in draw(st.lists(_text, max_size=4))]
        return [" " + head + comment, *body]
    inner = col + draw(st.integers(0 if kind == "seq" else 1, 3))
    lines = [comment]
    for _ in range(draw(st.integers(1, 3))):
        if kind == "map":
            node = _node(draw, inner, depth + 1)
            lines += [" " * inner + draw(_key) + ":" + node[0], *node[1:]]
        elif draw(st.booleans()):
            lines.append(" " * inner + "- " + _scalar(draw))
        else:  # `- key: value`: a mapping at the column after the dash
            node = _node(draw, inner + 2, depth + 1)
            lines += [" " * inner + "- " + draw(_key) + ":" + node[0], *node[1:]]
    return lines


@st.composite
def _frontmatter(draw: st.DrawFn) -> str:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        node = _node(draw, 0, 0)
        lines.append(draw(_key) + ":" + node[0])
        lines += node[1:]
    return "\n".join(lines) + "\n"


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(_frontmatter())
def test_generated_frontmatter_reads_as_ruamel_does(raw: str) -> None:
    got: Any = load_plain(raw)
    if got is not None:
        assert got == ruamel_data(raw), raw


def test_plain_frontmatter_is_neither_looked_up_nor_remembered() -> None:
    # Reading it costs less than hashing it, asking SQLite and decoding the JSON row, and
    # a cold scan stored every load (issue 40); only what ruamel reads is worth keeping.
    from kbase_ci.parse.yamlload import YamlMemo

    asked: list[list[str]] = []
    memo = YamlMemo(lambda digests: asked.append(digests) or {})
    assert memo.load("title: x\ntags:\n  - a\n") == ({"title": "x", "tags": ["a"]}, None)
    assert asked == [] and memo.fresh == {}
    data, problem = memo.load("a: &x 1\nb: *x\n")
    assert (data, problem) == ({"a": 1, "b": 1}, None)
    assert len(asked) == 1 and len(memo.fresh) == 1
