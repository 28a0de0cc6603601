"""The plain-YAML reader on every frontmatter block of the shared vaults: wherever it
answers, it gives exactly what ruamel gives."""

from __future__ import annotations

import pytest

from kbase_ci.parse.frontmatter import split
from kbase_ci.parse.plainyaml import load_plain
from tests.conftest import CORPORA
from tests.unit.parse.test_plainyaml import ruamel_data


def test_every_shared_frontmatter_the_subset_reads_is_ruamels() -> None:
    if not CORPORA.is_dir():
        pytest.skip("../shared/corpora is not available")
    read = 0
    for note in sorted(CORPORA.glob("*/vault/**/*.md")):
        raw = split(note.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
                    )[0]
        if raw is None:
            continue
        got = load_plain(raw)
        if got is not None:
            read += 1
            assert got == ruamel_data(raw), note
    assert read > 50  # the subset is there to be used: most plain blocks are read
