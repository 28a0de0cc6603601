"""The plain-YAML reader against ruamel, the reader it stands in for: on every case it
answers it must give exactly ruamel's data, and it must leave everything else to ruamel
(every frontmatter block of the shared vaults: tests/slow/test_plainyaml_corpora.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from kbase_ci.parse.plainyaml import load_plain
from kbase_ci.parse.yamlload import load_yaml, to_json_safe
from tests import tables
from tests.complexity import assert_linear

_TABLE = Path(__file__).resolve().parents[3] / "fixtures" / "parser" / "plainyaml.txt"


def ruamel_data(raw: str) -> object:
    return to_json_safe(YAML(typ="safe").load(raw))


@pytest.mark.parametrize(("no", "given", "expected"), tables.arrows(_TABLE))
def test_plain_frontmatter_reads_as_ruamel_does(no: int, given: str, expected: str) -> None:
    raw = tables.decode(given).decode("utf-8")
    got = load_plain(raw)
    assert ("plain" if got is not None else "ruamel") == expected, f"line {no}"
    if got is not None:
        assert got == ruamel_data(raw)
        assert load_yaml(raw) == (got, None)


@pytest.mark.parametrize("line", ["k: a{}!", "k: [a{}b]", "k: a{}é", "k: [a{},b]"])
def test_long_runs_of_spaces_cost_linear_time(line: str) -> None:
    # A word may hold spaces and so may what follows it: `word *` tried every split of
    # a run of spaces (100k spaces in one note's frontmatter: 56 s of `kbase check`).
    assert_linear(lambda n: line.format(" " * n), load_plain, 200_000)
