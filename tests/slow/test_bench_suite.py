"""Smoke test of the benchmark suite: `python -m bench --quick` on tiny generated vaults,
so the suite cannot rot. It asserts the shape of results.json and of the rendered report,
never a speed (speed targets live in bench/). Parts that need ../shared, the bench extra
or the npm peers must be recorded as skipped, not fail, so this passes on a fresh machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import CORPORA, REPO

GROUPS = ("precommit", "index", "query", "quality", "peers-search", "peers-links",
          "peers-vectors", "scaling", "compare")


def _names(group: dict[str, Any]) -> list[str]:
    return [f["name"] for f in group["figures"]]


def test_quick_run_writes_results_and_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    published = REPO / "docs" / "benchmarks.md"
    before = published.stat().st_mtime_ns if published.exists() else None
    proc = subprocess.run([sys.executable, "-m", "bench", "--quick", "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))

    assert results["command"] == f"python -m bench --quick --out {out}"
    machine = results["machine"]
    assert machine["cores"] >= 1 and machine["python"] and machine["commit"]
    assert "numpy" in machine["versions"] and len(machine["load_end"]) == 3
    groups = results["groups"]
    assert list(groups) == list(GROUPS)
    errors = {name: g["notes"] for name, g in groups.items() if g["status"] == "error"}
    assert not errors, errors

    pre = groups["precommit"]
    assert pre["status"] == "ok"
    assert any(n.startswith("cold `kbase check --staged NOTE`") for n in _names(pre))
    assert "cold `kbase check --all`" in _names(pre)
    assert "`kbase check --staged NOTE`, new edit each run (as in commits)" in _names(pre)
    assert "same staged content again, all cached (`kbase check --staged NOTE`)" in \
        _names(pre)
    assert {"full build, cold parse cache",
            "incremental build (one note of the largest shard changed)",
            "artifact size", "peak memory (build process)"} <= set(_names(groups["index"]))
    query = _names(groups["query"])
    assert {"search --mode bm25", "backlinks", "explore"} <= set(query)
    assert any(n.startswith("first query") for n in query)
    for fig in groups["query"]["figures"]:
        assert fig["median"] > 0 and fig["command"].startswith("kbase ")
    scaled = {f["notes"] for f in groups["scaling"]["figures"]}
    assert scaled == {30, 60}
    # Two trees and two index builds: `python -m bench --only compare` measures it.
    assert groups["compare"]["status"] == "skipped"
    assert "--quick" in groups["compare"]["notes"][0]

    if CORPORA.is_dir():
        quality = groups["quality"]["figures"]
        assert {f["name"] for f in quality if "recall@5" in f} == {"bm25", "semantic",
                                                                  "hybrid"}
        assert all(0.0 <= f["recall@5"] <= 1.0 for f in quality if "recall@5" in f)
        assert "kbase bm25" in _names(groups["peers-search"])
    else:
        assert groups["quality"]["status"] == "skipped"
        assert "../shared" in groups["quality"]["notes"][0]
    if groups["peers-vectors"]["status"] == "ok":
        exact, approx = groups["peers-vectors"]["figures"][:2]
        assert exact["recall@10"] == 1.0 and 0.0 <= approx["recall@10"] <= 1.0

    doc = (out / "benchmarks.md").read_text(encoding="utf-8")
    assert doc.startswith("# Benchmarks\n")
    assert f"`python -m bench --quick --out {out}`" in doc
    for name in GROUPS:
        assert f"\n## {name}\n" in doc
    assert "| cold `kbase check --all` |" in doc
    # A quick run renders into its out dir and leaves the published page alone.
    assert (published.stat().st_mtime_ns if published.exists() else None) == before


def test_unknown_group_is_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "bench", "--quick", "--out", str(tmp_path),
                           "--only", "nonsense"], cwd=REPO, capture_output=True, text=True,
                          check=False, timeout=60)
    assert proc.returncode == 2
    assert "unknown group nonsense" in proc.stderr
    assert not (tmp_path / "results.json").exists()
