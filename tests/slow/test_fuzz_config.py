"""Issue 38, item 13: `.kbase.yml` is measured before ruamel reads it
(kbase_ci.vault.yamlconfig.check_shape), so the measure must never see less nesting
than ruamel builds: a bracket hidden from it (behind a quote it took for a string, a
tag, a block scalar it misread) would let a deep document through to ruamel's quadratic
scanner. Property (Hypothesis, over the tokens YAML nests and quotes with): for every
document ruamel loads, the pass counts at least the depth of what it loaded, and it
never raises anything but a ConfigError."""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbase_ci.errors import ConfigError
from kbase_ci.vault import yamlconfig

TOKENS = ["[", "]", "{", "}", ",", ":", " ", " ", "'", '"', "\n", "\n  ", "\n    ", "- ",
          "a", "b", "#", "|", ">", "!t ", "&x ", "*x", "? ", "\\", ": ", "k: ", "''",
          ", ", "[a, ", "{k: ", "!!str ']', ", "- - ", "|\n  ", "\t"]


def _depth(value: Any) -> int:
    best, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            best = max(best, depth)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            best = max(best, depth)
            stack.extend((v, depth + 1) for v in item)
    return best


class _Counted(yamlconfig._Shape):
    """The pass, with its cap lifted: how deep it measured the document."""

    deepest = 0

    def _limit(self, levels: int, line: int, col: int) -> None:
        _Counted.deepest = max(_Counted.deepest,
                               self.depth + len(self.indents) + levels)


@settings(max_examples=3000, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=60))
def test_the_shape_pass_never_counts_less_nesting_than_ruamel_builds(
        tokens: list[str]) -> None:
    from ruamel.yaml import YAML

    text = "".join(tokens)
    with contextlib.suppress(ConfigError):
        yamlconfig.check_shape(text, ".kbase.yml")
    _Counted.deepest = 0
    shape = _Counted(".kbase.yml")
    for row, line in enumerate(text.split("\n"), 1):
        shape.line(row, line)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = YAML(typ="rt").load(text)
    except Exception:  # not YAML: ruamel stops before it nests
        return
    assert _Counted.deepest >= _depth(loaded), text


@pytest.mark.parametrize("depth", [200, 1000])
def test_a_deep_document_is_refused_by_the_pass(depth: int) -> None:
    for text in ("a: " + "[" * depth, "a: " + "{b: " * depth, "- " * depth,
                 "".join(" " * i + f"k{i}:\n" for i in range(depth)),
                 "a: [" + "!!str ']', [" * depth):
        with pytest.raises(ConfigError, match="nested more than"):
            yamlconfig.check_shape(text, ".kbase.yml")
