"""Notes written since the index are scored with the index's own statistics: a query's
ranking over the overlay equals the ranking of a full rebuild, and a new note (committed,
staged or untracked) is the top hit for its own words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import corpus_repo, git, run_kbase, write
from querykit import clone, publish_index, query

from bench.generate import generate_vault

NEW = {
    "Databases/Quorum Zebrafish.md": "# Quorum Zebrafish\n\nThe zebrafish quorum protocol "
                                     "replicates writes to a majority of replicas.\n",
    "Frontend/Plover Shading.md": "# Plover Shading\n\nPlover shading renders gradients in "
                                  "the browser with a cache per frame.\n",
    "Networking/Ocelot Routing.md": "# Ocelot Routing\n\nOcelot routing balances packets "
                                    "between racks when a link fails.\n",
}
QUERIES = ["zebrafish quorum", "plover shading gradients", "ocelot routing racks",
           "replica lag", "quorum reads", "database index", "consistency", "packet routing",
           "cache invalidation", "deadlock", "heartbeat timeout", "certificate chain",
           "compaction", "backpressure", "exactly once delivery", "hash join", "vacuum"]


def _ranking(repo: Path, index: Path, q: str) -> list[tuple[str, float]]:
    proc = run_kbase("search", q, "--mode", "bm25", "--limit", "20", "--explain", "--index",
                     str(index), cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    return [(r["path"], r["explain"]["bm25"]["score"])
            for r in json.loads(proc.stdout)["results"]]


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A generated vault indexed at its first commit, then changed every way there is: a
    note committed, one staged, one untracked (a new domain among them), one edited, one
    deleted. Returns (work tree, the index of the first commit)."""
    base = tmp_path_factory.mktemp("overlay")
    repo = base / "vault"
    repo.mkdir()
    generate_vault(repo, 120, seed=3)
    before = base / "before"
    assert run_kbase("index", "--out", str(before), cwd=repo).returncode == 0
    write(repo, NEW)
    git(repo, "add", "Databases/Quorum Zebrafish.md")
    git(repo, "commit", "-q", "-m", "committed note")
    git(repo, "add", "Frontend/Plover Shading.md")  # staged; Ocelot stays untracked
    notes = sorted(p for p in repo.rglob("*.md") if ".git" not in p.parts
                   and p.relative_to(repo).as_posix() not in NEW)
    edited, gone = notes[10], notes[11]
    edited.write_text(edited.read_text(encoding="utf-8") + "\nReplica lag and quorum reads.\n",
                      encoding="utf-8")
    git(repo, "rm", "-q", gone.relative_to(repo).as_posix())
    return repo, before


def test_new_notes_are_top_hits_for_their_own_words(changed: tuple[Path, Path]) -> None:
    repo, before = changed
    for q, path in zip(QUERIES[:3], NEW, strict=True):
        proc = run_kbase("search", q, "--mode", "bm25", "--index", str(before), cwd=repo)
        ans = json.loads(proc.stdout)
        assert proc.returncode == 0 and ans["results"][0]["path"] == path, (q, ans)
        assert ans["results"][0]["confidence"] == "high"
        assert path in ans["index"]["stale_notes"]


def test_overlay_ranks_equal_a_full_rebuild(changed: tuple[Path, Path],
                                           tmp_path: Path) -> None:
    repo, before = changed
    overlaid = {q: _ranking(repo, before, q) for q in QUERIES}
    git(repo, "add", "-A")  # the same notes, now all committed: nothing left to overlay
    git(repo, "commit", "-q", "-m", "everything")
    after = tmp_path / "after"
    assert run_kbase("index", "--out", str(after), cwd=repo).returncode == 0
    rebuilt = {q: _ranking(repo, after, q) for q in QUERIES}
    assert sum(len(r) for r in rebuilt.values()) > 100
    for q in QUERIES:
        assert [p for p, _ in overlaid[q]] == [p for p, _ in rebuilt[q]], q
        assert [s for _, s in overlaid[q]] == pytest.approx([s for _, s in rebuilt[q]],
                                                            abs=1e-4), q


@pytest.mark.corpus
@pytest.mark.parametrize("corpus", ["data-engineering-wiki"])
def test_a_note_written_after_the_published_index_answers_in_a_clone(
        corpus: str, tmp_path: Path) -> None:
    src = corpus_repo(corpus, tmp_path / "src")
    publish_index(src)
    cl = clone(src, tmp_path / "clone")
    notes = {
        "Committed Wombat.md": "# Committed Wombat\n\nThe wombat ledger reconciles nightly "
                               "exports of the task list.\n",
        "Staged Quokka.md": "# Staged Quokka\n\nQuokka checkpoints keep a snapshot of every "
                            "query result.\n",
        "Untracked Narwhal.md": "# Untracked Narwhal\n\nNarwhal sharding splits the archive "
                                "by year and month.\n",
    }
    write(cl, notes)
    git(cl, "add", "Committed Wombat.md")
    git(cl, "commit", "-q", "-m", "wombat")
    git(cl, "add", "Staged Quokka.md")
    for q, path in zip(["wombat ledger", "quokka checkpoints", "narwhal sharding archive"],
                       notes, strict=True):
        code, ans, err = query(cl, "search", q)
        assert code == 0, err
        assert ans["results"][0]["path"] == path and ans["results"][0]["confidence"] == "high"
        assert ans["index"]["origin"] == "remote-branch"
