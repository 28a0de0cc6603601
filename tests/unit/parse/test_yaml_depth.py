"""Issue 38 item 1: `tags:` then `  - - - ... - x` (1,000 dashes, 2 KB) loaded, and the
YAML memo's `json.dumps` of the 1,000-deep list raised RecursionError (exit 3 in every
command that parses notes); 100,000 dashes crashed ruamel's C composer (a segfault).
Every form of YAML nesting is bounded before any reader sees the text (`too_deep`), and
what aliases nest beyond it is refused while the data is copied: a located KB304."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from kbase_ci.parse.parser import parse_note
from kbase_ci.parse.yamlload import MAX_DEPTH, YamlMemo, load_yaml, too_deep
from kbase_ci.parsed import ParsedNote


def _dashes(n: int) -> str:
    return "tags:\n  " + "- " * n + "x\n"


def _questions(n: int) -> str:
    return "? " * n + "x\n"


def _key_of_dashes(n: int) -> str:
    return "? " + "- " * n + "x\n"


def _mappings(n: int) -> str:
    return "".join(" " * i + f"k{i}:\n" for i in range(n)) + " " * n + "end\n"


def _sequences(n: int) -> str:
    return "a:\n" + "".join(" " * i + "-\n" for i in range(n)) + " " * n + "- x\n"


def _mixed(n: int) -> str:
    return "a:\n" + "".join(" " * (2 * i) + "- k:\n" for i in range(n)) + " " * 2 * n + "x\n"


def _flow(n: int) -> str:
    return "a: " + "[" * n + "x" + "]" * n + "\n"


def _flow_over_lines(n: int) -> str:
    # A flow collection may run over lines of any indentation: the bound must not drop
    # the block nesting it was opened in.
    return "a:\n  b:\n    c: [\n" + "[\n" * n + "x\n" + "]\n" * (n + 1)


# (form, a size read without a problem, a size refused, the refused line within the YAML)
FORMS = [
    (_dashes, 60, 1000, 1), (_questions, 60, 3000, 0), (_key_of_dashes, 60, 3000, 0),
    (_mappings, 40, 1400, 99), (_sequences, 40, 1400, 99), (_mixed, 40, 700, 99),
    (_flow, 150, 300, 0), (_flow_over_lines, 150, 300, 194),
]


@pytest.mark.parametrize(("make", "fine", "deep", "row"), FORMS)
def test_every_form_of_nesting_is_bounded_and_located(make: Callable[[int], str], fine: int,
                                                      deep: int, row: int) -> None:
    assert too_deep(make(fine)) is None
    problem = load_yaml(make(fine))[1]
    assert problem is None or problem.code != "KB304"  # `? ? x`: a key YAML can't hash
    assert too_deep(make(deep)) == row
    data, problem = load_yaml(make(deep))
    assert data == {} and problem is not None
    assert (problem.code, problem.line, problem.col) == ("KB304", row + 2, 1)


@pytest.mark.parametrize("n", [1000, 100_000])
def test_compact_sequences_are_refused_before_any_reader(n: int) -> None:
    # 100,000 levels made ruamel's C composer recurse until the process crashed.
    raw = _dashes(n)
    memo = YamlMemo()
    data, problem = memo.load(raw)  # the memo stores JSON of what was loaded
    assert data == {} and problem is not None and problem.code == "KB304"
    assert json.loads(memo.fresh.popitem()[1])[0] == {}


def test_alias_chains_nest_without_deep_text_and_are_refused() -> None:
    # Each line is one level deeper than the one before through its alias, while no
    # line of the text nests: the copy of the loaded data counts the depth.
    chain = "a0: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 400))
    assert too_deep(chain) is None
    data, problem = load_yaml(chain)
    assert data == {} and problem is not None
    assert (problem.code, problem.line) == ("KB304", 2)
    short = "a0: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 100))
    assert load_yaml(short)[1] is None


def test_the_deepest_frontmatter_read_survives_every_writer() -> None:
    # Just under the bound: loaded, remembered, stored in the parse cache as JSON.
    raw = _flow(MAX_DEPTH - 10)
    assert load_yaml(raw)[1] is None
    note = parse_note("Deep.md", f"---\n{raw}---\n[[x]]\n".encode())
    assert not note.diagnostics
    assert ParsedNote.from_json(json.loads(json.dumps(note.to_json()))) == note


def test_a_deep_note_is_parsed_with_its_body() -> None:
    note = parse_note("Deep.md", f"---\n{_dashes(1000)}---\nsee [[B]]\n".encode())
    assert [(d.code, d.line) for d in note.diagnostics] == [("KB304", 3)]
    assert note.frontmatter == {} and [ln.raw for ln in note.links] == ["[[B]]"]
    json.dumps(note.to_json())
