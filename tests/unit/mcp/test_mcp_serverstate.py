"""The server's warm state (kbase_ci/mcp/serverstate.py) in-process on real repositories: a view
is reused only while nothing it depends on moved, and the index is reopened when the
index branch moves."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, run_kbase
from querykit import publish_index

from kbase_ci.mcp.serverstate import ServerState
from kbase_ci.mcp.watch import Watch

NOTES = {
    "Home.md": "# Home\n\nSee [[Alpha]] and [[Beta]].\n",
    "Alpha.md": "# Alpha\n\nThe alpha note talks about lanterns.\n",
    "Beta.md": "---\ntags: [b]\n---\n# Beta\n\nBeta links back to [[Home]].\n",
}


def test_view_is_reused_until_the_work_tree_moves(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(NOTES)
    publish_index(repo)
    warm = ServerState(repo)
    first = warm.view()
    assert warm.view() is first  # nothing moved
    assert first.source.origin == "worktree"

    (repo / "Alpha.md").write_text("# Alpha\n\nNow about kites.\n", encoding="utf-8")
    edited = warm.view()
    assert edited is not first and edited.fresh.changed == ("Alpha.md",)
    assert warm.view() is edited
    # The same file edited again: same modified set, other stat.
    (repo / "Alpha.md").write_text("# Alpha\n\nNow about kites and owls.\n",
                                   encoding="utf-8")
    again = warm.view()
    assert again is not edited and "owls" in again.text("Alpha.md")

    git(repo, "add", "Alpha.md")  # the git index file moved; the content did not
    staged = warm.view()
    assert staged is not again and staged.fresh.changed == ("Alpha.md",)

    # A note in a new folder, staged, then edited again: the new folder is watched too.
    (repo / "Deep" / "Er").mkdir(parents=True)
    (repo / "Deep" / "Er" / "Delta.md").write_text("# Delta\n\nFirst.\n", encoding="utf-8")
    git(repo, "add", "Deep")
    added = warm.view()
    assert added.fresh.added == ("Deep/Er/Delta.md",) and warm.view() is added
    (repo / "Deep" / "Er" / "Delta.md").write_text("# Delta\n\nSecond.\n", encoding="utf-8")
    assert "Second" in warm.view().text("Deep/Er/Delta.md")

    (repo / ".kbase.yml").write_text("index:\n  domain: folder\n", encoding="utf-8")
    assert warm.view() is not staged  # config is part of the key
    assert warm.reopened == 1


def test_watch_reports_changes_once_and_follows_new_folders(tmp_path: Path) -> None:
    watch = Watch.start(tmp_path)
    if watch is None:
        pytest.skip("no inotify here")
    try:
        assert not watch.changed()
        (tmp_path / "a.md").write_text("x", encoding="utf-8")
        assert watch.changed() and not watch.changed()
        (tmp_path / "new").mkdir()
        assert watch.changed()
        (tmp_path / "new" / "b.md").write_text("y", encoding="utf-8")
        assert watch.changed() and not watch.changed()
        (tmp_path / ".git").mkdir()  # git's own writes are not the work tree's
        assert watch.changed()
        (tmp_path / ".git" / "index").write_text("z", encoding="utf-8")
        assert not watch.changed()
    finally:
        watch.close()


def test_index_branch_moving_reopens_the_source(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(NOTES)
    publish_index(repo)
    shutil.rmtree(repo / ".kbase")  # answer from the branch, as a fresh clone would
    warm = ServerState(repo)
    before = warm.view()
    assert before.source.origin == "branch" and warm.reopened == 1
    old_commit = before.index_info().to_json()["source_commit"]

    (repo / "Gamma.md").write_text("# Gamma\n\nNew.\n", encoding="utf-8")
    git(repo, "add", "Gamma.md")
    git(repo, "commit", "-q", "-m", "gamma")
    overlaid = warm.view()
    assert overlaid.fresh.added == ("Gamma.md",) and warm.reopened == 2  # HEAD moved

    for cmd in (("index",), ("publish",)):
        proc = run_kbase(*cmd, cwd=repo)
        assert proc.returncode == 0, proc.stderr
    shutil.rmtree(repo / ".kbase")
    after = warm.view()
    assert warm.reopened == 3
    assert after.index_info().to_json()["source_commit"] != old_commit
    assert after.index_info().to_json()["stale_notes"] == [] and "Gamma.md" in after.notes
