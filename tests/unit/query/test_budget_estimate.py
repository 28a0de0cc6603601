"""The token estimate's symbol class, written out for a fast compile, matches the same
code points as the negated class it replaced (kbase_ci/query/budget.py: `_SYMBOLS`)."""

from __future__ import annotations

import re

from kbase_ci.query import budget


def test_the_written_out_symbol_class_matches_the_negated_one_everywhere() -> None:
    negated = re.compile(r"[^A-Za-z0-9\s\x80-\U0010ffff]")
    differ = [c for c in range(0x110000)
              if bool(negated.fullmatch(chr(c))) != bool(budget._SYMBOLS.fullmatch(chr(c)))]
    assert differ == []


def test_symbols_are_priced_by_their_runs() -> None:
    # "{}" and "!!" are two runs of 2 symbols: 1 token each; \x1c is a space, not a symbol.
    assert budget.estimate_tokens("{}\x1c!!") == budget.estimate_tokens("{} !!")
    assert budget.estimate_tokens("\x1c") == 0
    assert budget.estimate_tokens("~") == 2  # one symbol: 1, raised by 10% (rounded up)
