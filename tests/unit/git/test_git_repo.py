"""kbase_ci.git.process and .repo against real repositories in temp dirs: failures are
GitError with git's own words, names are never pathspec globs, answers started ahead are
the answers asked for, and the questions about roots, commits and remotes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.errors import GitError
from kbase_ci.git import process
from kbase_ci.git.listing import ls_tree
from kbase_ci.git.repo import (
    find_root,
    git_dir,
    has_commit,
    has_remote,
    head_commit,
    is_ancestor,
    merge_base,
    object_format,
    remotes,
    rev_commit,
    toplevel,
    tree_of,
    valid_branch_name,
)
from tests.conftest import git, write

Repo = Callable[..., Path]


def test_a_failing_command_is_a_git_error_with_git_s_words(make_repo: Repo) -> None:
    root = make_repo({"a.md": "# A\n"})
    with pytest.raises(GitError, match=r"git cat-file -p failed: fatal: Not a valid object"):
        process.git(["cat-file", "-p", "no-such-object"], root)
    assert process.git(["cat-file", "-p", "no-such-object"], root, check=False) == b""
    assert process.git_text(["rev-parse", "HEAD"], root) == git(root, "rev-parse",
                                                                "HEAD").strip()


def test_note_names_are_never_pathspec_globs(make_repo: Repo) -> None:
    # `[draft] *.md` as a glob would match `d.md` and `a.md` too.
    root = make_repo({"[draft] *.md": "x\n", "d.md": "y\n", "a.md": "z\n"})
    assert [e.path for e in ls_tree(root, "HEAD", ["[draft] *.md"])] == ["[draft] *.md"]
    assert [e.path for e in ls_tree(root, "HEAD", ["*.md"])] == []


def test_an_answer_started_ahead_is_the_answer_asked_for(make_repo: Repo) -> None:
    root = make_repo({"a.md": "# A\n"})
    head = git(root, "rev-parse", "HEAD").strip()
    process.drop_prefetched()
    process.prefetch(root, [("rev-parse", "HEAD"), ("rev-parse", "HEAD^{tree}")])
    assert process.git_text(["rev-parse", "HEAD"], root) == head  # collected, not rerun
    assert process.drop_prefetched() == 1  # the tree id was never asked for
    assert process.drop_prefetched() == 0


def test_an_answer_started_ahead_keeps_its_failure(make_repo: Repo) -> None:
    root = make_repo({"a.md": "# A\n"})
    process.prefetch(root, [("rev-parse", "--verify", "nope")])
    with pytest.raises(GitError, match="git rev-parse --verify failed"):
        process.git(["rev-parse", "--verify", "nope"], root)
    assert process.drop_prefetched() == 0


def test_roots_from_a_subfolder_and_outside_any_repository(make_repo: Repo,
                                                          tmp_path: Path) -> None:
    root = make_repo({"sub/deep/a.md": "# A\n"})
    inner = root / "sub" / "deep"
    assert toplevel(inner) == root.resolve()
    assert find_root(inner) == root.resolve()
    assert git_dir(inner) == (root / ".git").resolve()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert toplevel(plain) is None and find_root(plain) == plain.resolve()


def test_a_folder_that_becomes_a_repository_is_seen_as_one(tmp_path: Path) -> None:
    later = tmp_path / "later"
    later.mkdir()
    assert toplevel(later) is None  # a miss is not remembered ...
    git(later, "init", "-q")
    assert toplevel(later) == later.resolve()  # ... so `git init` is noticed


def test_commits_by_name_and_their_relations(make_repo: Repo) -> None:
    root = make_repo({"a.md": "1\n"})
    assert head_commit(root) is not None
    first = git(root, "rev-parse", "HEAD").strip()
    write(root, {"a.md": "2\n"})
    git(root, "commit", "-qam", "two")
    second = git(root, "rev-parse", "HEAD").strip()
    assert rev_commit(root, "HEAD~1") == first and rev_commit(root, "main") == second
    assert rev_commit(root, "no-such-branch") is None
    blob = git(root, "rev-parse", "HEAD:a.md").strip()
    assert rev_commit(root, blob) is None  # names an object, but not a commit
    assert has_commit(root, second) and not has_commit(root, blob)
    assert tree_of(root, "HEAD") == git(root, "rev-parse", "HEAD^{tree}").strip()
    assert is_ancestor(root, first, second) and is_ancestor(root, second, second)
    assert not is_ancestor(root, second, first)
    assert merge_base(root, first, second) == first
    git(root, "checkout", "-q", "--orphan", "other")
    git(root, "commit", "-qm", "unrelated")
    assert merge_base(root, "other", "main") is None
    with pytest.raises(GitError, match="git merge-base failed"):
        is_ancestor(root, "0" * 40, second)  # not in this repository


def test_head_before_the_first_commit(make_repo: Repo) -> None:
    root = make_repo({"a.md": "# A\n"}, commit=False)
    assert head_commit(root) is None and rev_commit(root, "HEAD") is None


def test_remotes_origin_first_and_branch_names(make_repo: Repo) -> None:
    root = make_repo({"a.md": "# A\n"})
    assert remotes(root) == []
    for name in ("zeta", "alpha", "origin"):
        git(root, "remote", "add", name, f"https://example.invalid/{name}.git")
    assert remotes(root) == ["origin", "alpha", "zeta"]
    assert has_remote(root, "alpha") and not has_remote(root, "beta")
    assert valid_branch_name(root, "kbase-index") and valid_branch_name(root, "a/b")
    assert not valid_branch_name(root, "a..b") and not valid_branch_name(root, "-x")


def test_object_format_of_sha1_and_sha256_repositories(make_repo: Repo,
                                                      tmp_path: Path) -> None:
    assert object_format(make_repo({"a.md": "x\n"})) == "sha1"
    wide = tmp_path / "wide"
    wide.mkdir()
    git(wide, "init", "-q", "--object-format=sha256")
    assert object_format(wide) == "sha256"
