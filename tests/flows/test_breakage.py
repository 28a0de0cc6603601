"""`kbase check --staged`: links this commit breaks in notes it does not touch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.cli.main import main
from tests.conftest import git, write
from tests.conftest import repo_lines as _lines
from tests.conftest import staged_check as _check

OLD = "---\naliases: [Vieux]\n---\n# Old\n\n## Setup\n\nwords ^blk\n\n## Usage\n"

Repo = Callable[..., Path]


def test_rename_breaks_links_in_untouched_notes(make_repo: Repo,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"notes/Old.md": OLD, "U.md": "see [[Old]] and [o](notes/Old.md#setup)\n",
                      "notes/Fine.md": "[[Usage]] [[Old#Usage]]\n"})
    git(root, "mv", "notes/Old.md", "notes/New.md")
    rc, out = _check(root, capsys)
    assert rc == 1
    assert _lines(out) == [
        "U.md:1:5: KB101 [[Old]]: `notes/Old.md` was renamed to `notes/New.md` in this commit;"
        " did you mean [[New]]?",
        "U.md:1:17: KB101 [o](notes/Old.md#setup): `notes/Old.md` was renamed to "
        "`notes/New.md` in this commit; did you mean [o](notes/New.md#setup)?",
        "notes/Fine.md:1:11: KB101 [[Old#Usage]]: `notes/Old.md` was renamed to `notes/New.md` "
        "in this commit; did you mean [[New#Usage]]?",
    ]  # not [[Usage]]: untouched and already broken, so not this commit's doing


def test_delete_and_removed_alias(make_repo: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"notes/Old.md": OLD, "notes/Gone.md": "# Gone\n",
                      "U.md": "[[Gone]] ![[Gone]] [[Vieux]]\n"})
    git(root, "rm", "-q", "notes/Gone.md")
    write(root, {"notes/Old.md": OLD.replace("aliases: [Vieux]", "aliases: []")})
    git(root, "add", "notes/Old.md")
    rc, out = _check(root, capsys)
    assert rc == 1
    assert _lines(out) == [
        "U.md:1:1: KB101 [[Gone]]: `notes/Gone.md` was deleted in this commit",
        "U.md:1:10: KB102 ![[Gone]]: `notes/Gone.md` was deleted in this commit",
        "U.md:1:20: KB101 [[Vieux]]: alias `Vieux` was removed from `notes/Old.md` in this "
        "commit; did you mean [[Old]]?",
    ]


def test_heading_and_block_removed_or_renamed(make_repo: Repo,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"notes/A.md": "# A\n\n## Setup\n\n## Usage\n\npara ^blk\n",
                      "U.md": "[[A#Setup]] [[A#Usage]] [x](notes/A.md#usage) [[A#^blk]]\n",
                      "V.md": "[[A#Nope]]\n"})
    write(root, {"notes/A.md": "# A\n\n## Install\n\n## Usage\n\npara\n"})
    git(root, "add", "-A")
    rc, out = _check(root, capsys)
    assert rc == 1
    assert _lines(out) == [
        "U.md:1:1: KB111 [[A#Setup]]: heading `Setup` was renamed to `Install` in "
        "`notes/A.md` in this commit; did you mean [[A#Install]]?",
        "U.md:1:47: KB112 [[A#^blk]]: block `^blk` was removed from `notes/A.md` in this "
        "commit",
    ]
    write(root, {"notes/A.md": "# A\n\n## Usage\n"})  # Setup gone, heading count differs
    git(root, "add", "-A")
    rc, out = _check(root, capsys, "--select", "KB111")
    assert _lines(out) == ["U.md:1:1: KB111 [[A#Setup]]: heading `Setup` was removed from "
                           "`notes/A.md` in this commit"]


def test_focus_note_findings_name_the_cause(make_repo: Repo,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"notes/Old.md": OLD, "A.md": "# A\n"})
    git(root, "mv", "notes/Old.md", "notes/New.md")
    write(root, {"A.md": "# A\n\n[[Old]] [[Missing]]\n"})
    git(root, "add", "A.md")
    rc, out = _check(root, capsys, str(root / "A.md"))
    assert rc == 1
    assert _lines(out) == [
        "A.md:3:1: KB101 [[Old]]: `notes/Old.md` was renamed to `notes/New.md` in this commit; "
        "did you mean [[New]]?",
        "A.md:3:9: KB101 [[Missing]]: no note named `Missing`",
    ]


def test_split_file_lists_report_inbound_breakage_once(
        make_repo: Repo, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"notes/Old.md": OLD, "A.md": "# A\n", "B.md": "# B\n",
                      "U1.md": "[[Old]]\n", "U2.md": "[[Old#Setup]]\n"})
    git(root, "mv", "notes/Old.md", "notes/New.md")
    write(root, {"A.md": "[[Old]] [[Nope]]\n", "B.md": "[[Old]] [[Nope]]\n"})
    git(root, "add", "-A")
    monkeypatch.chdir(root)
    # pre-commit gives each staged Markdown file to exactly one process, in any split.
    for split in ([["B.md", "notes/New.md"], ["A.md"]], [["A.md", "B.md"], ["notes/New.md"]],
                  [["notes/New.md"], ["B.md"], ["A.md"]]):
        seen: list[str] = []
        for argv in split:
            main(["check", "--staged", *argv])
            seen += capsys.readouterr().out.splitlines()
        assert sorted(seen) == sorted([
            "A.md:1:1: KB101 [[Old]]: `notes/Old.md` was renamed to `notes/New.md` in this "
            "commit; did you mean [[New]]?",
            "A.md:1:9: KB101 [[Nope]]: no note named `Nope`",
            "B.md:1:1: KB101 [[Old]]: `notes/Old.md` was renamed to `notes/New.md` in this "
            "commit; did you mean [[New]]?",
            "B.md:1:9: KB101 [[Nope]]: no note named `Nope`",
            "U1.md:1:1: KB101 [[Old]]: `notes/Old.md` was renamed to `notes/New.md` in this "
            "commit; did you mean [[New]]?",
            "U2.md:1:1: KB101 [[Old#Setup]]: `notes/Old.md` was renamed to `notes/New.md` in "
            "this commit; did you mean [[New#Setup]]?",
        ]), split
    # A process given no staged note at all (pre-commit with no files) reports the rest.
    main(["check", "--staged", "README.txt"])
    assert "U1.md" in capsys.readouterr().out


def test_deletion_only_commit_runs_with_no_files(make_repo: Repo,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"notes/Old.md": OLD, "U.md": "[[Old]]\n"})
    git(root, "rm", "-q", "notes/Old.md")
    rc, out = _check(root, capsys)
    assert rc == 1 and "U.md:1:1: KB101 [[Old]]: `notes/Old.md` was deleted" in out


def test_no_markdown_staged_exits_before_scanning(make_repo: Repo,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"A.md": "[[broken]]\n", "code.py": "x = 1\n"}, commit=False)
    git(root, "commit", "-q", "-m", "init")
    write(root, {"code.py": "x = 2\n"})
    git(root, "add", "code.py")
    assert _check(root, capsys) == (0, "")
    assert not (root / ".git" / "kbase").exists()  # no parse cache: the vault was not read
    write(root, {"A.md": "[[broken]] edited [[also broken]]\n"})
    git(root, "add", "A.md")
    assert _check(root, capsys)[0] == 1


def test_first_commit_and_unstaged_edits(make_repo: Repo,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"A.md": "[[B]] [[Nope]]\n", "B.md": "# B\n"}, commit=False)
    rc, out = _check(root, capsys)  # no HEAD yet: everything is added
    assert rc == 1 and _lines(out) == ["A.md:1:7: KB101 [[Nope]]: no note named `Nope`"]
    write(root, {"A.md": "[[B]]\n"})  # fixed in the work tree only: the index still counts
    assert _check(root, capsys)[0] == 1
    git(root, "add", "A.md")
    write(root, {"A.md": "[[Nope]]\n"})  # broken in the work tree only: not judged
    assert _check(root, capsys) == (0, "")


def test_files_outside_vault_folders_are_ignored(make_repo: Repo,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({".kbase.yml": "vault:\n  folders: [notes]\n", "notes/A.md": "# A\n",
                      "README.md": "# R\n"})
    write(root, {"README.md": "[[nowhere]]\n", "docs/x.md": "[[nowhere]]\n"})
    git(root, "add", "-A")
    rc = main(["--root", str(root), "check", "--staged",
               *[str(root / f) for f in ("README.md", "docs/x.md")]])
    assert rc == 0, capsys.readouterr()
    write(root, {"notes/A.md": "[[nowhere]]\n"})
    git(root, "add", "-A")
    rc, out = _check(root, capsys)
    assert rc == 1 and _lines(out) == ["notes/A.md:1:1: KB101 [[nowhere]]: no note named "
                                       "`nowhere`"]


def test_dotdot_targets_and_odd_names(make_repo: Repo,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({
        "notes/100% intro.md": "# C\n", "notes/a^b.md": "# x\n", "notes/[draft] x.md": "# d\n",
        "notes/a|b.md": "# p\n",
        "other/S.md": "[x](../notes/100%25%20intro.md) [[notes/../notes/a^b]] "
                      "[d](../notes/%5Bdraft%5D%20x.md) [p](../notes/a%7Cb.md)\n",
    })
    for old, new in [("100% intro", "100% basics"), ("a^b", "c^d"), ("[draft] x", "[final] x"),
                     ("a|b", "c|d")]:
        git(root, "mv", f"notes/{old}.md", f"notes/{new}.md")
    rc, out = _check(root, capsys)
    assert rc == 1
    got = _lines(out)
    assert got == [
        "other/S.md:1:1: KB101 [x](../notes/100%25%20intro.md): `notes/100% intro.md` was "
        "renamed to `notes/100% basics.md` in this commit; did you mean "
        "[x](../notes/100%25%20basics.md)?",
        "other/S.md:1:33: KB101 [[notes/../notes/a^b]]: `notes/a^b.md` was renamed to "
        "`notes/c^d.md` in this commit; did you mean [[notes/c^d]]?",
        "other/S.md:1:56: KB101 [d](../notes/%5Bdraft%5D%20x.md): `notes/[draft] x.md` was "
        "renamed to `notes/[final] x.md` in this commit; did you mean "
        "[d](../notes/%5Bfinal%5D%20x.md)?",
        "other/S.md:1:89: KB101 [p](../notes/a%7Cb.md): `notes/a|b.md` was renamed to "
        "`notes/c|d.md` in this commit; did you mean [p](../notes/c%7Cd.md)?",
    ]
    assert main(["--root", str(root), "fix", "--staged"]) == 1
    capsys.readouterr()
    git(root, "add", "-A")
    assert _check(root, capsys) == (0, "")
