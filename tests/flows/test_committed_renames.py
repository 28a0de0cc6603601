"""Renames committed without the hook (a web editor, `--no-verify`), issue 29:
`kbase fix --base REV` repairs them, `--suggestions` also applies headings the change
renamed, and the PR report names the cause as the hook does instead of listing the old
name as a note to write.

Scenario vault: fixtures/hooks/committed-renames.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kbase_ci.ci.prreport import Context, compare
from kbase_ci.ci.render import render
from tests.conftest import FIXTURES, git, run_kbase

SCENARIO = FIXTURES / "hooks" / "committed-renames"


def _commit(root: Path, message: str) -> str:
    git(root, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", message,
        "--no-verify")
    return git(root, "rev-parse", "HEAD").strip()


def _renamed_without_hooks(tmp_path: Path) -> tuple[Path, str, str]:
    """(repo, base commit, head commit): `notes/Old.md` renamed and the heading `Link to a
    block` renamed, both committed past the hook."""
    root = tmp_path / "vault"
    shutil.copytree(SCENARIO / "vault", root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    base = _commit(root, "init")
    git(root, "mv", "notes/Old.md", "notes/New.md")
    guide = root / "notes" / "Guide.md"
    guide.write_text(guide.read_text().replace("## Link to a block", "## Link to blocks"))
    git(root, "add", "-A")
    return root, base, _commit(root, "rename in the web editor")


def test_fix_without_base_finds_nothing_to_repair(tmp_path: Path) -> None:
    root, _base, _head = _renamed_without_hooks(tmp_path)
    proc = run_kbase("fix", cwd=root)
    assert proc.returncode == 0 and proc.stdout == ""  # nothing is staged


def test_fix_base_repairs_committed_renames(tmp_path: Path) -> None:
    root, base, _head = _renamed_without_hooks(tmp_path)
    proc = run_kbase("fix", "--base", base, cwd=root)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == ["Home.md:3:5: [[Old]] -> [[New]]"]
    # The heading rename is read from its place among the headings: only on request.
    proc = run_kbase("fix", "--base", base, "--suggestions", cwd=root)
    assert proc.stdout.splitlines() == [
        "Home.md:3:14: [[Guide#Link to a block]] -> [[Guide#Link to blocks]]"]
    assert (root / "Home.md").read_text() == \
        "# Home\n\nSee [[New]], [[Guide#Link to blocks]] and [[Guide#Setup]].\n"
    assert run_kbase("check", "--all", cwd=root).returncode == 0


def test_fix_base_rejects_an_unknown_revision(tmp_path: Path) -> None:
    root, _base, _head = _renamed_without_hooks(tmp_path)
    proc = run_kbase("fix", "--base", "no-such-branch", cwd=root)
    assert proc.returncode == 2 and "--base no-such-branch: not a commit" in proc.stderr


def test_fix_suggestions_applies_a_heading_rename_the_hook_names(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    shutil.copytree(SCENARIO / "vault", root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    _commit(root, "init")
    guide = root / "notes" / "Guide.md"
    # No similarity to go by: only the change itself says what `Setup` became.
    guide.write_text(guide.read_text().replace("## Setup", "## Installation"))
    git(root, "add", "-A")
    check = run_kbase("check", "--staged", cwd=root)
    assert "heading `Setup` was renamed to `Installation` in `notes/Guide.md` in this " \
           "commit; did you mean [[Guide#Installation]]?" in check.stdout
    assert run_kbase("fix", "--staged", cwd=root).stdout == ""  # a rename of a note only
    proc = run_kbase("fix", "--staged", "--suggestions", cwd=root)
    assert proc.stdout.splitlines() == ["Home.md:3:44: [[Guide#Setup]] -> [[Guide#Installation]]"]


def test_the_pr_report_names_the_rename_and_lists_no_note_to_write(tmp_path: Path) -> None:
    root, base, head = _renamed_without_hooks(tmp_path)
    report = compare(root, base, head, Context())
    new = {m.finding.message for m in report.findings if m.status == "new"}
    assert "[[Old]]: `notes/Old.md` was renamed to `notes/New.md` in this PR; did you mean " \
           "[[New]]?" in new
    assert "[[Guide#Link to a block]]: heading `Link to a block` was renamed to `Link to " \
           "blocks` in `notes/Guide.md` in this PR; did you mean [[Guide#Link to blocks]]?" \
           in new
    assert report.new_gaps == ()  # `Old` is no note to write: it was renamed
    assert report.gaps == 0  # nor a pre-existing one
    assert report.notices == (f"1 link(s) broken by notes renamed in this PR: `kbase fix "
                              f"--base {base[:12]}` rewrites them to the new names "
                              "(`--suggestions` also renamed headings).",)
    body = render(report)
    assert "| gaps (link targets that do not exist) | 0 | 0 | 0 |" in body
    assert "no note" not in body
