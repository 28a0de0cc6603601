"""`kbase fix`: links broken by a staged rename are rewritten in their own style."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kbase_ci.cli.main import main
from tests import tables
from tests.conftest import FIXTURES, git, write

OLD_NOTE = "# Title\n\n## Setup\n\nSome words ^blk\n"


def _cases() -> list[tuple[str, str, str, str, str]]:
    out = []
    for n, line in tables.lines(FIXTURES / "fix" / "cases.txt"):
        source = "notes/Source.md"
        if line.startswith("in "):
            head, _, line = line.partition(": ")
            source = head[3:]
        before, move, after = (p.strip() for p in line.split(tables.CELL))
        old, _, new = (p.strip() for p in move.partition(" -> "))
        out.append(pytest.param(source, before, old, new, after, id=f"cases.txt:{n}"))
    return out


def _mv(root: Path, old: str, new: str) -> None:
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    git(root, "mv", old, new)


@pytest.mark.parametrize(("source", "before", "old", "new", "after"), _cases())
def test_fix_keeps_link_style(make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str],
                              source: str, before: str, old: str, new: str, after: str) -> None:
    content: str | bytes = OLD_NOTE if old.endswith(".md") else b"\x89PNG\r\n"
    root = make_repo({source: f"# S\n\nsee {before} here\n", old: content,
                      "notes/Other.md": "# Other\n"})
    _mv(root, old, new)
    rc = main(["--root", str(root), "fix", "--staged"])
    out = capsys.readouterr().out
    assert (root / source).read_text("utf-8") == f"# S\n\nsee {after} here\n"
    if after == before:
        assert rc == 0, out
        assert out == ""
    else:
        assert rc == 1
        assert f"{source}:3:5: {before} -> {after}" in out
        # The rewrite is what `kbase check` now accepts.
        git(root, "add", "-A")
        assert main(["--root", str(root), "check", "--staged", "--select", "links,sections"]) \
            == 0, capsys.readouterr()


def test_code_blocks_and_lookalikes_are_never_touched(make_repo: Callable[..., Path]) -> None:
    text = ("# S\n\n```\n[[Old]]\n```\n\n    [[Old]] indented code\n\n"
            "`[[Old]]` then [[Old]] and %%[[Old]]%% and [[Old]]\n\n> quote [[Old|q]]\n\n"
            "| a | [[Old\\|t]] |\n|---|---|\n| [[Old]] | x |\n")
    root = make_repo({"notes/S.md": text, "notes/Old.md": OLD_NOTE})
    _mv(root, "notes/Old.md", "notes/New.md")
    assert main(["--root", str(root), "fix", "--staged"]) == 1
    assert (root / "notes/S.md").read_text("utf-8") == (
        "# S\n\n```\n[[Old]]\n```\n\n    [[Old]] indented code\n\n"
        "`[[Old]]` then [[New]] and %%[[Old]]%% and [[New]]\n\n> quote [[New|q]]\n\n"
        "| a | [[New\\|t]] |\n|---|---|\n| [[New]] | x |\n")


def test_frontmatter_links_crlf_and_bom_survive(make_repo: Callable[..., Path]) -> None:
    text = "\ufeff---\r\nup: \"[[Old]]\"\r\n---\r\n# S\r\n\r\nsee [[Old]] and [[Old]]\r\n"
    root = make_repo({"notes/S.md": text.encode("utf-8"), "notes/Old.md": OLD_NOTE})
    _mv(root, "notes/Old.md", "notes/New.md")
    assert main(["--root", str(root), "fix", "--staged"]) == 1
    assert (root / "notes/S.md").read_bytes() == text.replace("[[Old]]", "[[New]]").encode()


def test_multiline_markdown_link_in_quote(make_repo: Callable[..., Path]) -> None:
    text = "# S\r\n\r\n> a [long\r\n> text](Old.md) end\r\n"
    root = make_repo({"notes/S.md": text.encode(), "notes/Old.md": OLD_NOTE})
    _mv(root, "notes/Old.md", "notes/New.md")
    assert main(["--root", str(root), "fix", "--staged"]) == 1
    assert (root / "notes/S.md").read_bytes() == text.replace("Old.md", "New.md").encode()


def test_rename_cycle_swaps_links(make_repo: Callable[..., Path],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"notes/a.md": "# A\n\n## Only in a\n", "notes/b.md": "# B\n",
                      "notes/S.md": "[[a]] [[b]] [[a#Only in a]] [x](a.md) [y](b.md)\n"})
    _mv(root, "notes/a.md", "notes/tmp.md")
    _mv(root, "notes/b.md", "notes/a.md")
    _mv(root, "notes/tmp.md", "notes/b.md")
    rc = main(["--root", str(root), "check", "--staged"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "notes/S.md:1:1: KB106 [[a]]: `notes/a.md` was renamed to `notes/b.md`" in out
    assert "did you mean [[b]]?" in out and "did you mean [[a]]?" in out
    assert main(["--root", str(root), "fix", "--staged"]) == 1
    # Each link rewritten once from its original text: no a->b->a chain.
    assert (root / "notes/S.md").read_text() == "[[b]] [[a]] [[b#Only in a]] [x](b.md) [y](a.md)\n"
    git(root, "add", "-A")
    capsys.readouterr()
    assert main(["--root", str(root), "check", "--staged"]) == 0, capsys.readouterr().out


def test_moved_note_own_relative_links_follow(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a/X.md": "[y](../b/Y.md) [[Y]] [self](#top)\n\n# top\n",
                      "b/Y.md": "# Y\n"})
    _mv(root, "a/X.md", "c/d/X.md")
    assert main(["--root", str(root), "fix", "--staged"]) == 1
    assert (root / "c/d/X.md").read_text() == "[y](../../b/Y.md) [[Y]] [self](#top)\n\n# top\n"


def test_non_utf8_note_is_rewritten_byte_exactly(make_repo: Callable[..., Path],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    data = b"# S\n\nbad \xff\xfe byte then [[Old]] and \xe2\x82 [[Old|x]]\n[[Old]]\n"
    root = make_repo({"notes/S.md": data, "notes/Old.md": OLD_NOTE})
    _mv(root, "notes/Old.md", "notes/New.md")
    rc = main(["--root", str(root), "check", "--staged"])
    out = capsys.readouterr().out
    assert rc == 1
    assert "notes/S.md:3:18: KB101 [[Old]]: `notes/Old.md` was renamed" in out
    assert main(["--root", str(root), "fix", "--staged"]) == 1
    assert (root / "notes/S.md").read_bytes() == data.replace(b"[[Old", b"[[New")


def test_dry_run_changes_nothing_and_nothing_to_fix_exits_0(
        make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"notes/S.md": "[[Old]]\n", "notes/Old.md": OLD_NOTE})
    assert main(["--root", str(root), "fix", "--staged"]) == 0  # nothing staged
    _mv(root, "notes/Old.md", "notes/New.md")
    assert main(["--root", str(root), "fix", "--staged", "--dry-run"]) == 1
    assert "notes/S.md:1:1: [[Old]] -> [[New]]" in capsys.readouterr().out
    assert (root / "notes/S.md").read_text() == "[[Old]]\n"


def test_file_changed_since_staged_is_left_whole(make_repo: Callable[..., Path],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"notes/S.md": "[[Old]] and [[Old]]\n", "notes/Old.md": OLD_NOTE})
    _mv(root, "notes/Old.md", "notes/New.md")
    write(root, {"notes/S.md": "new first line\n[[Old]] and [[Old]]\n"})  # unstaged edit
    assert main(["--root", str(root), "fix", "--staged"]) == 1
    err = capsys.readouterr().err
    assert "notes/S.md: not rewritten: it changed since it was read" in err
    assert (root / "notes/S.md").read_text() == "new first line\n[[Old]] and [[Old]]\n"
    assert not list(root.glob("notes/.*kbase-tmp"))
    # Without --staged the work tree is what is read, so the same edit is fixed.
    assert main(["--root", str(root), "fix"]) == 1
    assert (root / "notes/S.md").read_text() == "new first line\n[[New]] and [[New]]\n"


def test_split_file_lists_rewrite_each_file_once(make_repo: Callable[..., Path],
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"A.md": "[[Old]]\n", "B.md": "[[Old]]\n", "U.md": "[[Old]]\n",
                      "notes/Old.md": OLD_NOTE})
    _mv(root, "notes/Old.md", "notes/New.md")
    write(root, {"A.md": "[[Old]] edited\n", "B.md": "[[Old]] edited\n"})
    git(root, "add", "A.md", "B.md")
    monkeypatch.chdir(root)
    outs = []
    for argv in (["B.md", "notes/New.md"], ["A.md"]):
        main(["fix", "--staged", *argv])
        outs.append(capsys.readouterr().out)
    assert "U.md" not in outs[0] and "B.md:1:1" in outs[0]
    assert "U.md:1:1: [[Old]] -> [[New]]" in outs[1] and "A.md:1:1" in outs[1]
    assert all((root / p).read_text().startswith("[[New]]") for p in ("A.md", "B.md", "U.md"))


def test_check_after_fix_reports_each_problem_once(make_repo: Callable[..., Path],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """kbase-fix-links then kbase-check in one hook run: the check does not repeat the
    links the fixer just rewrote (but still fails until the fix is staged), keeps the
    problems the fixer did not touch, and reports everything again once the memo is
    stale (the work-tree copy edited again)."""
    root = make_repo({"notes/Old.md": OLD_NOTE, "U.md": "see [[Old]] and [[Nowhere]]\n",
                      "V.md": "# V\n"})
    git(root, "mv", "notes/Old.md", "notes/New.md")
    write(root, {"V.md": "# V\n[[Gone]]\n"})
    git(root, "add", "V.md")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        assert main(["fix", "--staged"]) == 1
        capsys.readouterr()
        assert main(["check", "--staged"]) == 1
        out, err = capsys.readouterr()
        assert "[[Old]]" not in out and "V.md:2:1: KB101 [[Gone]]" in out
        assert "1 broken link(s) not repeated: `kbase fix` rewrote them in the work tree " \
               "in this run (U.md)" in err
        write(root, {"U.md": "see [[New]] and [[Nowhere]], edited\n"})
        assert main(["check", "--staged"]) == 1
        out, _ = capsys.readouterr()
        assert "U.md:1:5: KB101 [[Old]]" in out
        git(root, "add", "U.md")
        assert main(["check", "--staged", "--select", "links"]) == 1  # [[Gone]], [[Nowhere]]
        out, err = capsys.readouterr()
        assert "[[Old]]" not in out and "not repeated" not in err


def test_summary_counts_the_notes_a_deletion_breaks(make_repo: Callable[..., Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    root = make_repo({"A.md": "# A\n", "B.md": "# B\nSee [[A]].\n", "C.md": "# C\n"})
    git(root, "rm", "-q", "A.md")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        assert main(["check", "--staged"]) == 1
    out, err = capsys.readouterr()
    assert "B.md:2:5: KB101 [[A]]: `A.md` was deleted in this commit" in out
    assert "1 of 2 notes checked" in err  # B.md was read for the broken link (was "0 of 2")


def test_check_after_fix_reports_a_rewrite_that_is_still_broken(
        make_repo: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    """The commit renames a note and removes the heading a link names: the fixer rewrites
    `[[Old#Setup]]` to `[[New#Setup]]`, which still finds no heading, so the check in the
    same run reports that link instead of "no other problems"."""
    root = make_repo({"notes/Old.md": OLD_NOTE, "U.md": "see [[Old#Setup]] and [[Old]]\n"})
    git(root, "mv", "notes/Old.md", "notes/New.md")
    write(root, {"notes/New.md": "# Title\n\nSome words ^blk\n"})
    git(root, "add", "notes/New.md")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        assert main(["fix", "--staged"]) == 1
        capsys.readouterr()
        assert (root / "U.md").read_text() == "see [[New#Setup]] and [[New]]\n"
        assert main(["check", "--staged"]) == 1
        out, err = capsys.readouterr()
        assert "U.md:1:5: KB101 [[Old#Setup]]" in out  # its rewrite still finds no heading
        assert "U.md:1:23" not in out  # [[Old]] -> [[New]] is whole: not repeated
        assert "no other problems" not in err and "1 broken link(s) not repeated" in err
