from __future__ import annotations

import pytest

from kbase_ci.globs import PathFilter, match
from tests.conftest import FIXTURES


def _cases() -> list[tuple[int, str, str, bool]]:
    out = []
    for i, line in enumerate((FIXTURES / "globs.txt").read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        pat, path, want = (c.strip() for c in line.split("|"))
        out.append((i, pat, path, want == "yes"))
    return out


@pytest.mark.parametrize(("lineno", "pattern", "path", "want"), _cases(),
                         ids=lambda v: str(v) if isinstance(v, int) else None)
def test_glob_table(lineno: int, pattern: str, path: str, want: bool) -> None:
    assert match(pattern, path) is want, f"globs.txt line {lineno}"


def test_filter_include_exclude() -> None:
    f = PathFilter(include=("notes/**",), exclude=("notes/drafts/**",))
    assert f("notes/a.md")
    assert not f("notes/drafts/a.md")
    assert not f("other/a.md")
    assert PathFilter()("anything/at/all.md")
