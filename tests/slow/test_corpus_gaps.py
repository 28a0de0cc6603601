"""`kbase gaps` on a real vault of ../shared/corpora (skipped when absent): the most
linked note nobody wrote is the one its MANIFEST.md names. The gaps cases on the fixture
vault are tests/unit/query/test_gaps.py."""

from __future__ import annotations

from pathlib import Path

from conftest import corpus_repo, run_kbase
from querykit import query


def test_data_engineering_wiki_top_gap(tmp_path: Path) -> None:
    repo = corpus_repo("data-engineering-wiki", tmp_path / "dew")
    assert run_kbase("index", cwd=repo).returncode == 0
    code, ans, _ = query(repo, "gaps")
    assert code == 0
    top = ans["unwritten"][0]
    assert (top["target"], top["notes"]) == ("Apache Kafka", 3)  # per its MANIFEST.md
    assert all(r["sentence"] for r in top["referrers"])
