"""Issue 38, item 13: a `.kbase.yml` is refused by its shape before ruamel reads it
(kbase_ci.vault.yamlconfig.check_shape): ruamel's scanner is quadratic in flow depth
(3,000 levels took 11 s to refuse) and its round-trip loader slow per value (200k
`vault.exclude` globs ran for over a minute). Each refusal is a located KB900; real
configs pass, and the scan is linear."""

from __future__ import annotations

import pytest

from kbase_ci.errors import ConfigError
from kbase_ci.vault.config import parse_config
from kbase_ci.vault.yamlconfig import MAX_DEPTH, MAX_ITEMS, MAX_VALUES, check_shape
from tests.complexity import assert_linear

DEEP = MAX_DEPTH + 1
REFUSED = {
    "flow list": ("vault:\n  exclude: " + "[" * 3000 + "]" * 3000 + "\n",
                  "2:", "nested more than 64 levels deep"),
    "flow map": ("a: " + "{b: " * DEEP + "}" * DEEP + "\n", "1:", "nested more than"),
    "brackets hidden behind tags": ("a: [" + "!!str ']', [" * DEEP + "]" * DEEP + "]\n",
                                    "1:", "nested more than"),
    "indented blocks": ("".join(" " * i + f"k{i}:\n" for i in range(DEEP)), f"{MAX_DEPTH}:",
                        "nested more than"),
    "compact sequences": ("tags:\n  " + "- " * DEEP + "x\n", "2:", "nested more than"),
    "values": ("vault:\n  exclude:\n" + "".join(f"    - g{i}/*\n"
                                                for i in range(MAX_VALUES)),
               f"{MAX_VALUES + 1}:", f"more than {MAX_VALUES} values"),
    "flow values": ("vault:\n  exclude: [" + ", ".join(f"g{i}" for i in range(MAX_VALUES))
                    + "]\n", "2:", f"more than {MAX_VALUES} values"),
    "bytes": ("# " + "x" * (1 << 20) + "\n", "1:1:", "larger than 1048576 characters"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_configs_of_no_real_shape_are_refused_where_they_go_wrong(case: str) -> None:
    text, where, what = REFUSED[case]
    with pytest.raises(ConfigError) as got:
        parse_config(text)
    assert str(got.value).startswith(f".kbase.yml:{where}") and "KB900" in str(got.value)
    assert what in str(got.value)


def test_a_list_setting_longer_than_its_cap_is_refused_at_the_first_item_past_it() -> None:
    text = "vault:\n  exclude:\n" + "".join(f"    - g{i}/*\n" for i in range(MAX_ITEMS + 1))
    with pytest.raises(ConfigError) as got:
        parse_config(text)
    assert str(got.value).startswith(f".kbase.yml:{MAX_ITEMS + 3}:7: KB900 `vault.exclude` "
                                     f"has {MAX_ITEMS + 1} items")


@pytest.mark.parametrize("text", [
    "vault:\n  exclude: [drafts/**, '[[not]] a flow', \"a ]] b\"]\n",
    "types:\n  handover:\n    sections: [Context, Next steps]\n",
    "note: |\n  " + "[" * 200 + " text, not flow\n" + "vault:\n  exclude: [a]\n",
    "tags:\n  allowed: ['#x', \"y#\"]  # a comment with [[[[[[\n",
    "checks:\n  per_path:\n    \"archive/**\": [links, KB2]\n",
])
def test_real_shapes_pass(text: str) -> None:
    check_shape(text, ".kbase.yml")


@pytest.mark.parametrize(("head", "piece"), [
    ("a: ", "'b'"), ("a: ", "b:c "), ("a: '", "b''"), ('a: "', '\\"'), ("a: [", "!t &a "),
    ("a: b ", "# [[ "), ("a: b ", "[{,'\""), ("a: |\n  ", "[{,'\"")])
def test_the_shape_scan_is_linear(head: str, piece: str) -> None:
    """Lines that hold no value the scan counts (a capped count ends it early): quoted
    text, plain text, escapes, properties, comments, a block scalar's text."""
    def run(text: str) -> str:
        try:
            check_shape(text, "x")
        except ConfigError as exc:
            return exc.detail
        return ""

    assert assert_linear(lambda size: head + piece * (size // len(piece)), run,
                         200_000) == ""
