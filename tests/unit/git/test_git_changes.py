"""kbase_ci.git.diff, .listing and .history against real repositories: what a commit, the
index and the work tree change, relative to the folder asked from, as git itself says."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.git.diff import (
    added_lines,
    changes_between,
    old_blob_shas,
    staged_changes,
    staged_paths,
)
from kbase_ci.git.history import commit_time, deleted_paths, deleted_with
from kbase_ci.git.listing import (
    WorktreeListing,
    added_or_deleted_since,
    changed_since,
    is_ignored,
    ls_tree,
    modified_in_worktree,
    untracked_files,
)
from tests.conftest import git, write

Repo = Callable[..., Path]
LONG = "".join(f"line {i}: enough text for git to see a renamed file as one\n"
               for i in range(30))


def _kinds(changes: list) -> set[tuple[str, str, str | None]]:
    return {(c.kind, c.path, c.old_path) for c in changes}


def test_staged_changes_of_every_kind(make_repo: Repo) -> None:
    root = make_repo({"keep.md": LONG, "edit.md": "# E\n", "gone.md": "# G\n",
                      "old.md": "# Old\n" + LONG, "link.md": "# L\n"})
    head_blob = git(root, "rev-parse", "HEAD:old.md").strip()
    git(root, "mv", "old.md", "new.md")
    write(root, {"edit.md": "# E edited\n", "add.md": "# A\n"})
    (root / "gone.md").unlink()
    (root / "link.md").unlink()
    os.symlink("keep.md", root / "link.md")  # a file that became a link: type-changed
    git(root, "add", "-A")
    changes = staged_changes(root)
    assert _kinds(changes) == {("renamed", "new.md", "old.md"), ("modified", "edit.md", None),
                               ("deleted", "gone.md", None), ("added", "add.md", None),
                               ("type-changed", "link.md", None)}
    renamed = next(c for c in changes if c.kind == "renamed")
    assert renamed.old_sha == head_blob
    assert next(c for c in changes if c.kind == "added").old_sha is None
    assert staged_paths(root) == sorted(["add.md", "edit.md", "link.md", "new.md"])
    assert deleted_paths(changes) == {"gone.md", "old.md"}


def test_changes_are_relative_to_the_folder_asked_from(make_repo: Repo) -> None:
    root = make_repo({"vault/a.md": "# A\n", "code/x.py": "x = 1\n"})
    write(root, {"vault/a.md": "# A edited\n", "code/x.py": "x = 2\n", "vault/sub/b.md": "b\n"})
    git(root, "add", "-A")
    assert _kinds(staged_changes(root / "vault")) == {("modified", "a.md", None),
                                                     ("added", "sub/b.md", None)}
    assert staged_paths(root / "vault") == ["code/x.py", "vault/a.md", "vault/sub/b.md"]


def test_a_swap_pairs_as_two_renames_only_when_rewrites_are_broken(make_repo: Repo) -> None:
    root = make_repo({"a.md": "# A\n" + LONG, "b.md": "# B\n" + LONG.upper()})
    (root / "a.md").rename(root / "t.md")
    (root / "b.md").rename(root / "a.md")
    (root / "t.md").rename(root / "b.md")
    git(root, "add", "-A")
    assert _kinds(staged_changes(root)) == {("modified", "a.md", None),
                                            ("modified", "b.md", None)}
    assert _kinds(staged_changes(root, break_rewrites=True)) == {
        ("renamed", "a.md", "b.md"), ("renamed", "b.md", "a.md")}


def test_changes_between_commits_and_the_lines_they_add(make_repo: Repo) -> None:
    root = make_repo({"n.md": "one\ntwo\nthree\nfour\n", "old.md": "# O\n" + LONG})
    base = git(root, "rev-parse", "HEAD").strip()
    write(root, {"n.md": "one\nTWO\nthree\nfour\nfive\nsix\n"})
    git(root, "mv", "old.md", "moved.md")
    git(root, "commit", "-qam", "edit")
    head = git(root, "rev-parse", "HEAD").strip()
    assert _kinds(changes_between(root, base, head)) == {("modified", "n.md", None),
                                                        ("renamed", "moved.md", "old.md")}
    assert added_lines(root, base, head, "n.md") == {2, 5, 6}
    assert added_lines(root, base, head, "absent.md") == frozenset()


def test_old_blob_ids_listing_few_or_all_paths_agree(make_repo: Repo) -> None:
    files: dict[str, str | bytes] = {f"n{i:03}.md": f"# {i}\n" for i in range(70)}
    root = make_repo(files)
    wanted = [f"n{i:03}.md" for i in range(70)] + ["missing.md"]
    every = old_blob_shas(root, "HEAD", wanted)  # > 64 paths: one listing of all
    few = old_blob_shas(root, "HEAD", [*wanted[:3], "missing.md"])  # pathspecs
    assert len(every) == 70 and "missing.md" not in every
    assert few == {p: every[p] for p in wanted[:3]}
    assert every["n007.md"] == git(root, "rev-parse", "HEAD:n007.md").strip()
    assert old_blob_shas(root, "HEAD", []) == {}
    assert ls_tree(root, "no-such-rev", check=False) == []


def test_what_the_work_tree_changed(make_repo: Repo) -> None:
    root = make_repo({"a.md": "# A\n", "b.md": "# B\n", "c.md": "# C\n",
                      ".gitignore": "*.tmp\n"})
    base = git(root, "rev-parse", "HEAD").strip()
    write(root, {"a.md": "# A edited\n", "new.md": "# New\n", "scratch.tmp": "x\n"})
    git(root, "add", "new.md")
    write(root, {"b.md": "# B staged\n"})
    git(root, "add", "b.md")
    (root / "c.md").unlink()
    assert modified_in_worktree(root) == {"a.md", "c.md"}  # not the staged-only b.md
    assert untracked_files(root) == set()  # new.md is staged; scratch.tmp is ignored
    write(root, {"loose.md": "# Loose\n"})
    assert untracked_files(root) == {"loose.md"}
    assert is_ignored(root, "scratch.tmp") and not is_ignored(root, "loose.md")
    assert changed_since(root, base) == ["a.md", "b.md", "c.md", "new.md"]
    assert added_or_deleted_since(root, base) == ["new.md"]  # c.md is only unstaged
    assert added_or_deleted_since(root, "0" * 40) is None


def test_status_started_at_once_and_listing_when_asked(make_repo: Repo) -> None:
    root = make_repo({"v/a.md": "# A\n", "v/b.md": "# B\n", "other.md": "# O\n"})
    head = git(root, "rev-parse", "HEAD").strip()
    write(root, {"v/a.md": "# A edited\n", "other.md": "# O edited\n", "v/u.md": "u\n"})
    listing = WorktreeListing(root, untracked=True)
    status = listing.status("v/")
    assert status.head == head and status.changed
    assert status.modified == {"a.md"} and status.untracked == {"u.md"}
    assert [r[0] for r in listing.rows()] == ["other.md", "v/a.md", "v/b.md"]
    with pytest.raises(RuntimeError, match="already collected"):
        listing.status("v/")
    again = WorktreeListing(root)
    assert [r[0] for r in again.rows()] == ["other.md", "v/a.md", "v/b.md"]
    assert not again.status("").untracked  # not asked for
    again.stop()


def test_status_of_a_repository_without_commits(make_repo: Repo) -> None:
    root = make_repo({"a.md": "# A\n"}, commit=False)
    listing = WorktreeListing(root)
    status = listing.status("")
    listing.stop()
    assert status.head is None and status.changed and status.modified == set()


def test_what_the_change_that_wrote_a_note_deleted(make_repo: Repo, tmp_path: Path) -> None:
    root = make_repo({"handover.md": "# H\n", "x.py": "x\n", "y.py": "y\n"})
    assert commit_time(root, "handover.md") == int(git(root, "log", "-1", "--format=%ct"))
    assert commit_time(root, "never.md") is None
    git(root, "rm", "-q", "x.py")
    write(root, {"handover.md": "# H\n\nDeleted x.py\n"})
    git(root, "add", "handover.md")
    assert deleted_with(root, "handover.md", staged=True) == {"x.py"}  # pre-commit
    assert deleted_with(root, "handover.md", staged=False) == {"x.py"}  # uncommitted work
    git(root, "commit", "-qm", "drop x")
    git(root, "rm", "-q", "y.py")
    git(root, "commit", "-qm", "drop y, not with the note")
    assert deleted_with(root, "handover.md", staged=False) == {"x.py"}  # its last commit
    plain = tmp_path / "plain"
    plain.mkdir()
    assert deleted_with(plain, "h.md", staged=False) == frozenset()
    assert commit_time(plain, "h.md") is None
