"""Issue 22, hangs: reading a handover section's body (placeholders, comments, `%%`
blocks) is linear: twice the line costs at most 2.5x the CPU
(tests/complexity.assert_linear; a quadratic scan costs 4x)."""

from __future__ import annotations

import pytest

from kbase_ci.handover.placeholders import read_body
from tests.complexity import assert_linear


def section_of(piece: str, size: int) -> list[str]:
    return ["## Next steps", piece * (size // len(piece))]


@pytest.mark.parametrize(("piece", "size"), [("<!--", 256_000), ("%%", 256_000),
                                             (" . ", 4_000_000), ("<!--%%", 256_000)])
def test_handover_placeholders_are_linear(piece: str, size: int) -> None:
    assert_linear(lambda n: section_of(piece, n),
                  lambda lines: len(read_body(lines, 2, 2, "Next steps").lines), size)
