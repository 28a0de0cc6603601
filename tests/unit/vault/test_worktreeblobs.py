"""Blobs read from the work tree: only a regular file, reached through real folders,
whose bytes are the very blob; everything else comes from git, unchanged."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.git.objects import blob_sha
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.worktreeblobs import read_clean, read_contents
from tests.conftest import git, write


def test_a_clean_file_is_read_and_anything_else_is_left_to_git(
        make_repo: Callable[..., Path], tmp_path: Path) -> None:
    root = make_repo({"a.md": "alpha\n", "sub/b.md": "beta\n", "c.md": "gamma\n",
                      "d.md": "delta\n"})
    shas = {n.path: n.sha for n in Vault(root, staged=True).notes}
    write(root, {"c.md": "edited after staging\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.md").write_text("beta\n")  # the same bytes, but beyond a link
    (root / "sub" / "b.md").unlink()
    (root / "sub").rmdir()
    (root / "sub").symlink_to(outside)
    (root / "d.md").unlink()
    (root / "d.md").symlink_to(root / "a.md")
    got = read_clean(root, list(shas.items()))
    assert got == {shas["a.md"]: b"alpha\n"}
    # read_contents takes the rest from git: the staged blobs, whatever the work tree has.
    both = read_contents(root, list(shas.items()), files=True)
    assert both == {shas["a.md"]: b"alpha\n", shas["sub/b.md"]: b"beta\n",
                    shas["c.md"]: b"gamma\n", shas["d.md"]: b"delta\n"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_place_of_a_note_does_not_block(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "alpha\n"})
    sha = blob_sha(b"alpha\n")
    (root / "a.md").unlink()
    os.mkfifo(root / "a.md")
    assert read_clean(root, [("a.md", sha)]) == {}
    assert read_contents(root, [("a.md", sha)], files=True) == {sha: b"alpha\n"}


def test_an_end_of_line_filter_still_gives_the_blob(make_repo: Callable[..., Path]) -> None:
    # The work tree holds CRLF, the blob LF: the file is not the blob, git's bytes win.
    root = make_repo({".gitattributes": "*.md text eol=crlf\n", "a.md": "one\ntwo\n"})
    (root / "a.md").unlink()
    git(root, "checkout", "--", "a.md")
    assert (root / "a.md").read_bytes() == b"one\r\ntwo\r\n"
    for vault in (Vault(root), Vault(root, staged=True)):
        assert vault.read(vault.notes) == {"a.md": b"one\ntwo\n"}
