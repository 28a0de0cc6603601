from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.errors import GitError, UsageError
from kbase_ci.git.objects import blob_sha
from kbase_ci.vault.config import parse_config
from kbase_ci.vault.notefiles import Vault
from tests.conftest import git, write


def test_notes_are_tracked_markdown_files(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "# A\n", "sub/b.md": "[[a]]\n", "img.png": b"\x89PNG"})
    write(root, {"untracked.md": "not a note\n"})
    v = Vault(root)
    assert v.mode == "git-worktree"
    assert [n.path for n in v.notes] == ["a.md", "sub/b.md"]
    assert v.files == ("a.md", "img.png", "sub/b.md")
    assert v.read(v.notes) == {"a.md": b"# A\n", "sub/b.md": b"[[a]]\n"}


def test_staged_mode_reads_the_index_not_the_work_tree(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "committed\n"})
    write(root, {"a.md": "staged\n"})
    git(root, "add", "a.md")
    write(root, {"a.md": "unstaged edit\n"})
    staged = Vault(root, staged=True)
    assert staged.mode == "git-index"
    assert staged.read(staged.notes)["a.md"] == b"staged\n"
    work = Vault(root)
    assert work.read(work.notes)["a.md"] == b"unstaged edit\n"
    assert work.notes[0].sha == blob_sha(b"unstaged edit\n")


def test_deleted_in_work_tree_is_not_a_note(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "x\n", "b.md": "y\n"})
    (root / "b.md").unlink()
    assert [n.path for n in Vault(root).notes] == ["a.md"]
    assert [n.path for n in Vault(root, staged=True).notes] == ["a.md", "b.md"]


def test_folders_and_excludes(make_repo: Callable[..., Path]) -> None:
    root = make_repo({
        "notes/a.md": "a", "notes/templates/t.md": "t", "src/readme.md": "r",
        ".kbase.yml": "vault:\n  folders: [notes]\n  exclude: ['notes/templates/**']\n",
    })
    v = Vault(root)
    assert [n.path for n in v.notes] == ["notes/a.md"]
    assert "src/readme.md" in v.files  # still a link target, just not a note


def test_subfolder_root_lists_relative_paths(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"vault/x.md": "x", "other.md": "o"})
    v = Vault(root / "vault")
    assert [n.path for n in v.notes] == ["x.md"]


def test_subfolder_root_sees_work_tree_edits_there_only(make_repo: Callable[..., Path]
                                                         ) -> None:
    # git status names paths from the repository root; the vault's are from its own.
    root = make_repo({"vault/x.md": "x\n", "vault/y.md": "y\n", "x.md": "top\n",
                      "vault/z.md": "z\n", "vault/w.md": "w\n"})
    write(root, {"vault/x.md": "edited\n", "x.md": "top edited\n", "vault/w.md": "w2\n"})
    git(root, "add", "vault/w.md")  # staged: the index and the work tree agree
    (root / "vault" / "z.md").unlink()
    v = Vault(root / "vault")
    assert [n.path for n in v.notes] == ["w.md", "x.md", "y.md"]
    assert v.read(v.notes) == {"w.md": b"w2\n", "x.md": b"edited\n", "y.md": b"y\n"}
    assert Vault(root).read(Vault(root).notes)["x.md"] == b"top edited\n"


def test_a_conflicted_note_is_read_from_the_work_tree(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "base\n"})
    git(root, "checkout", "-q", "-b", "other")
    write(root, {"a.md": "other\n"})
    git(root, "commit", "-qam", "other")
    git(root, "checkout", "-q", "main")
    write(root, {"a.md": "main\n"})
    git(root, "commit", "-qam", "main")
    assert git(root, "merge", "-q", "other", check=False) is not None
    text = (root / "a.md").read_bytes()
    assert b"<<<<<<<" in text
    v = Vault(root)
    assert [n.path for n in v.notes] == ["a.md"]
    assert v.read(v.notes)["a.md"] == text


def test_symlinks_are_never_read(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("outside the repo\n")
    root = make_repo({"a.md": "a"}, commit=False)
    (root / "link.md").symlink_to(secret)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "x")
    v = Vault(root)
    assert [n.path for n in v.notes] == ["a.md"]
    assert "link.md" in v.files


def test_walk_fallback_outside_git(tmp_path: Path) -> None:
    write(tmp_path, {"a.md": "a", ".obsidian/x.md": "skip", "d/b.md": "b", "i.png": b"x"})
    v = Vault(tmp_path, parse_config(""))
    assert v.mode == "walk"
    assert [n.path for n in v.notes] == ["a.md", "d/b.md"]
    assert v.read(v.notes)["d/b.md"] == b"b"
    assert "i.png" in v.files


def test_missing_root_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        Vault(tmp_path / "nope")


def test_select_rejects_paths_outside_the_vault(make_repo: Callable[..., Path],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo({"v/a.md": "a", "out.md": "o", "v/img.png": b"x"})
    monkeypatch.chdir(root)
    v = Vault(root / "v")
    found, rejected = v.select(["v/a.md", "out.md", "v/img.png", "v/missing.md"])
    assert [n.path for n in found] == ["a.md"]
    assert rejected == ["out.md", "v/img.png", "v/missing.md"]


def test_vault_at_a_commit(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "old\n", "b.md": "b\n",
                      ".kbase.yml": "links:\n  markdown_links: false\n"})
    base = git(root, "rev-parse", "HEAD").strip()
    write(root, {"a.md": "new\n", ".kbase.yml": "links:\n  markdown_links: true\n"})
    git(root, "rm", "-q", "b.md")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "two")
    old = Vault(root, rev=base)
    assert old.mode == "git-commit"
    assert [n.path for n in old.notes] == ["a.md", "b.md"]
    assert old.read(old.notes)["a.md"] == b"old\n"
    assert old.config.links.markdown_links is False  # the config of that commit
    assert Vault(root, rev="HEAD").config.links.markdown_links is True
    with pytest.raises(GitError):  # exit 2 (cli.main.EXIT_CODES)
        Vault(root, rev="no-such-rev")
