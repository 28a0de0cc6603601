from __future__ import annotations

import pytest

from kbase_ci.vault.globs import match
from tests import tables
from tests.conftest import FIXTURES


def _cases() -> list[tuple[int, str, str, bool]]:
    return [(i, pat, path, want == "yes")
            for i, (pat, path, want) in tables.cells(FIXTURES / "globs.txt")]


@pytest.mark.parametrize(("lineno", "pattern", "path", "want"), _cases(),
                         ids=lambda v: str(v) if isinstance(v, int) else None)
def test_glob_table(lineno: int, pattern: str, path: str, want: bool) -> None:
    assert match(pattern, path) is want, f"globs.txt line {lineno}"


