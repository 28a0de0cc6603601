"""Issue 32: the parser's speed work changes no output. Every note of every vault in
../shared/corpora (skipped when absent) parses to the same ParsedNote with this tree as
with BASELINE, the last commit before that work, checked out into a temporary worktree
(skipped when the clone does not hold it, as a shallow CI clone may not).

A deliberate change of the parser's output makes this fail: then move BASELINE to the
commit that made the change, after checking the differences it lists are the intended ones
(`python -m bench.parse_compare --against BASELINE` prints them)."""

from __future__ import annotations

import subprocess

import pytest

from bench.parse_compare import default_folders, differences, digest_run
from bench.workloads import Worktree
from tests.conftest import REPO

BASELINE = "f5e6fef0a5081bbb56ac06069e1ff7682867090b"


@pytest.mark.corpus
def test_every_shared_note_parses_as_before() -> None:
    folders = default_folders()
    if not folders:
        pytest.skip("../shared/corpora is not available")
    known = subprocess.run(["git", "cat-file", "-e", f"{BASELINE}^{{commit}}"], cwd=REPO,
                           capture_output=True, check=False)
    if known.returncode != 0:
        pytest.skip(f"this clone does not hold {BASELINE[:7]}")
    with Worktree(BASELINE) as old_tree:
        old = digest_run(old_tree, folders)
    new = digest_run(REPO, folders)
    assert new["notes"] == old["notes"] > 30_000
    assert differences(new["digests"], old["digests"]) == []
