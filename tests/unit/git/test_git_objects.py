"""kbase_ci.git.objects and .indexbranch against real repositories: object ids as git
computes them, blobs read and streamed whole, and the index branch's plumbing (trees,
deterministic commits, leased ref moves and pushes, what FETCH_HEAD and trailers say)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.errors import GitError, UsageError
from kbase_ci.git import indexbranch
from kbase_ci.git.indexbranch import (
    BRANCH,
    commit_tree,
    fetch_head,
    fetch_timeout,
    git_date,
    index_ref_tips,
    push_with_lease,
    read_file_at,
    trailer,
    update_ref,
    write_tree,
)
from kbase_ci.git.objects import blob_sha, blob_sizes, object_id, read_blobs, write_blobs
from tests.conftest import git, write

Repo = Callable[..., Path]
CONTENTS = [b"", b"# A\n", b"line\r\nwith CRLF\r\n", bytes(range(256)), "Ünï ✓\n".encode(),
            b"x" * 70_000]


@pytest.mark.parametrize("data", CONTENTS, ids=["empty", "text", "crlf", "binary", "utf8",
                                                "70k"])
def test_object_ids_are_git_s(make_repo: Repo, tmp_path: Path, data: bytes) -> None:
    root = make_repo({"a.md": "x\n"})
    (tmp_path / "blob").write_bytes(data)
    by_git = git(root, "hash-object", "--no-filters", str(tmp_path / "blob")).strip()
    assert blob_sha(data) == object_id(data, "blob", "sha1") == by_git
    wide = tmp_path / "wide"
    wide.mkdir()
    git(wide, "init", "-q", "--object-format=sha256")
    assert object_id(data, "blob", "sha256") == git(
        wide, "hash-object", "--no-filters", str(tmp_path / "blob")).strip()


def test_blobs_are_read_and_streamed_whole(make_repo: Repo, tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {f"f{i}.bin": data for i, data in enumerate(CONTENTS)}
    root = make_repo(files)
    ids = [git(root, "rev-parse", f"HEAD:f{i}.bin").strip() for i in range(len(CONTENTS))]
    got = read_blobs(root, [*ids, ids[1]])  # asked twice: read once
    assert [got[i] for i in ids] == CONTENTS
    targets = [(sha, tmp_path / f"out{i}") for i, sha in enumerate(ids)]
    write_blobs(root, targets)
    assert [dest.read_bytes() for _, dest in targets] == CONTENTS
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    assert blob_sizes(root, [*ids, tree, "0" * 40]) == {
        sha: len(data) for sha, data in zip(ids, CONTENTS, strict=True)}
    assert read_blobs(root, []) == {} and blob_sizes(root, []) == {}


def test_a_missing_blob_is_a_git_error(make_repo: Repo, tmp_path: Path) -> None:
    root = make_repo({"a.md": "# A\n"})
    present = git(root, "rev-parse", "HEAD:a.md").strip()
    with pytest.raises(GitError, match=f"git object {'1' * 40} is missing"):
        read_blobs(root, [present, "1" * 40])
    with pytest.raises(GitError, match="is missing"):
        write_blobs(root, [(present, tmp_path / "a"), ("1" * 40, tmp_path / "b")])


@pytest.mark.parametrize(("built_at", "date"), [
    ("2024-01-02T03:04:05+00:00", "@1704164645 +0000"),
    ("2024-01-02T03:04:05+02:00", "@1704157445 +0200"),
    ("2024-01-02T03:04:05-05:30", "@1704184445 -0530"),
    ("2024-01-02T03:04:05", "@1704164645 +0000"),  # no zone: UTC
])
def test_git_date_of_a_manifest_time(built_at: str, date: str) -> None:
    assert git_date(built_at) == date


@pytest.mark.parametrize("bad", ["yesterday", "", "2024-13-01"])
def test_git_date_refuses_what_is_not_a_date(bad: str) -> None:
    with pytest.raises(UsageError, match="built_at is not an ISO date"):
        git_date(bad)


def _publishable(root: Path, files: dict[str, bytes]) -> dict[str, str]:
    folder = root.parent / f"{root.name}-out"
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    expected = {rel: blob_sha(data) for rel, data in files.items()}
    indexbranch.write_blobs(root, folder, expected)
    return expected


def test_the_same_files_give_the_same_commit_in_any_clone(make_repo: Repo) -> None:
    files = {"manifest.json": b"{}\n", "shards/a/bm25.npy": b"\x93NUMPY",
             "shards/b/notes.json": b"[]\n"}
    commits = []
    for _ in range(2):
        root = make_repo({"a.md": "# A\n"})
        tree = write_tree(root, _publishable(root, files))
        assert git(root, "ls-tree", "-r", "--name-only", tree).split() == sorted(files)
        commit = commit_tree(root, tree, None, "index of abc\n\nKbase-Source: abc\n",
                             git_date("2024-01-02T03:04:05+00:00"))
        assert read_file_at(root, commit, "shards/b/notes.json") == b"[]\n"
        assert read_file_at(root, commit, "nope.json") is None
        assert trailer(root, commit, "Kbase-Source") == "abc"
        assert trailer(root, commit, "Other") is None
        commits.append(commit)
    assert commits[0] == commits[1]


def test_a_file_changed_after_it_was_verified_is_refused(make_repo: Repo) -> None:
    root = make_repo({"a.md": "# A\n"})
    folder = root.parent / "out"
    folder.mkdir()
    (folder / "manifest.json").write_bytes(b"{}\n")
    with pytest.raises(UsageError, match="changed while publishing"):
        indexbranch.write_blobs(root, folder, {"manifest.json": blob_sha(b"other\n")})


def test_refs_move_only_from_the_value_read(make_repo: Repo) -> None:
    root = make_repo({"a.md": "1\n"})
    first = git(root, "rev-parse", "HEAD").strip()
    write(root, {"a.md": "2\n"})
    git(root, "commit", "-qam", "two")
    second = git(root, "rev-parse", "HEAD").strip()
    ref = f"refs/heads/{BRANCH}"
    update_ref(root, ref, first, None, "sha1")  # created: it did not exist
    with pytest.raises(GitError):
        update_ref(root, ref, second, None, "sha1")  # exists now: a concurrent writer
    with pytest.raises(GitError):
        update_ref(root, ref, second, second, "sha1")  # holds `first`, not `second`
    update_ref(root, ref, second, first, "sha1")
    assert git(root, "rev-parse", ref).strip() == second


def test_pushes_are_leased_on_what_the_remote_held(make_repo: Repo, tmp_path: Path) -> None:
    root = make_repo({"a.md": "1\n"})
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(root, "remote", "add", "origin", str(remote))
    first = git(root, "rev-parse", "HEAD").strip()
    assert indexbranch.remote_tip(root, "origin", BRANCH) is None
    assert push_with_lease(root, "origin", BRANCH, first, None).accepted
    assert indexbranch.remote_tip(root, "origin", BRANCH) == first
    write(root, {"a.md": "2\n"})
    git(root, "commit", "-qam", "two")
    second = git(root, "rev-parse", "HEAD").strip()
    stale = push_with_lease(root, "origin", BRANCH, second, None)  # it is there now
    assert not stale.accepted and "stale info" in stale.detail
    assert push_with_lease(root, "origin", BRANCH, second, first).accepted
    assert git(remote, "rev-parse", f"refs/heads/{BRANCH}").strip() == second


def test_index_branches_local_first_then_origin(make_repo: Repo) -> None:
    root = make_repo({"a.md": "# A\n"})
    head = git(root, "rev-parse", "HEAD").strip()
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    for ref in (f"refs/remotes/zz/{BRANCH}", f"refs/remotes/origin/{BRANCH}",
                f"refs/heads/{BRANCH}", "refs/remotes/origin/main"):
        git(root, "update-ref", ref, head)
    assert index_ref_tips(root) == [(f"refs/heads/{BRANCH}", tree, head),
                                    (f"refs/remotes/origin/{BRANCH}", tree, head),
                                    (f"refs/remotes/zz/{BRANCH}", tree, head)]


def test_fetch_head_lines(tmp_path: Path) -> None:
    assert fetch_head(tmp_path) == []
    a, b = "a" * 40, "b" * 40
    (tmp_path / "FETCH_HEAD").write_text(
        f"{a}\t\tbranch '{BRANCH}' of https://example.invalid/v\n"
        f"{b}\tnot-for-merge\tbranch 'main' of https://example.invalid/v\n"
        "not a line\n\n")
    assert fetch_head(tmp_path) == [(a, f"branch '{BRANCH}' of https://example.invalid/v"),
                                    (b, "branch 'main' of https://example.invalid/v")]


@pytest.mark.parametrize(("value", "seconds"), [(None, 20.0), ("", 20.0), ("2.5", 2.5),
                                                ("abc", 20.0), ("0", 20.0), ("-1", 20.0)])
def test_fetch_timeout_from_the_environment(monkeypatch: pytest.MonkeyPatch,
                                            value: str | None, seconds: float) -> None:
    if value is None:
        monkeypatch.delenv("KBASE_FETCH_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("KBASE_FETCH_TIMEOUT", value)
    assert fetch_timeout() == seconds

