"""The hook a team can live with (issue 29): `kbase check --staged` blocks only what the
commit introduces, a staged `.kbase.yml` is validated and its new policy applied, and a
named untracked note is checked.

Scenario vaults: fixtures/hooks/new-only, fixtures/hooks/config-change,
fixtures/hooks/untracked.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, git, run_kbase, write

HOOKS = FIXTURES / "hooks"


def _repo(tmp_path: Path, scenario: str) -> Path:
    root = tmp_path / scenario
    shutil.copytree(HOOKS / scenario / "vault", root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "init")
    return root


def _append(root: Path, path: str, text: str) -> None:
    full = root / path
    full.write_text(full.read_text(encoding="utf-8") + text, encoding="utf-8")
    git(root, "add", "--", path)


def test_an_edit_that_adds_no_problem_commits_despite_old_ones(tmp_path: Path) -> None:
    root = _repo(tmp_path, "new-only")
    _append(root, "Notes.md", "\nA new paragraph.\n")
    proc = run_kbase("check", "--staged", "Notes.md", cwd=root)
    assert proc.returncode == 0 and proc.stdout == ""
    assert "no new problems, 2 pre-existing (not blocking; --all-findings shows them)" \
        in proc.stderr
    full = run_kbase("check", "--staged", "--all-findings", "Notes.md", cwd=root)
    assert full.returncode == 1
    assert [ln.split()[1] for ln in full.stdout.splitlines()] == ["KB101", "KB103"]


def test_a_new_problem_blocks_and_only_it_is_shown(tmp_path: Path) -> None:
    root = _repo(tmp_path, "new-only")
    _append(root, "Notes.md", "\nAnd now [[Missing]] twice and [[Brand New Gap]].\n")
    proc = run_kbase("check", "--staged", "Notes.md", cwd=root)
    assert proc.returncode == 1
    # The second [[Missing]] is new too: of identical findings, those on lines the
    # commit wrote are the new ones (the matcher the PR report uses).
    assert [ln.split(":", 3)[:3] for ln in proc.stdout.splitlines()] == [
        ["Notes.md", "5", "9"], ["Notes.md", "5", "31"]]
    assert "2 new (2 error(s), 0 warning(s)) in 1 file(s), 2 pre-existing" in proc.stderr
    data = json.loads(run_kbase("check", "--staged", "--format", "json", "Notes.md",
                                cwd=root).stdout)
    assert data["summary"]["new_only"] is True and data["summary"]["pre_existing"] == 2
    assert [f["code"] for f in data["pre_existing"]] == ["KB101", "KB103"]


def test_a_rename_fixed_and_staged_is_not_blocked_by_old_problems(tmp_path: Path) -> None:
    # Issue 29: after `git mv` + `kbase fix` + `git add`, every rename run was still
    # blocked by findings the fixer's notes already had.
    root = _repo(tmp_path, "new-only")
    git(root, "mv", "Old.md", "New.md")
    broken = run_kbase("check", "--staged", cwd=root)
    assert broken.returncode == 1 and "renamed to `New.md` in this commit" in broken.stdout
    assert run_kbase("fix", "--staged", cwd=root).returncode == 1  # rewrote Index.md
    git(root, "add", "-A")
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 0, proc.stdout
    assert "1 pre-existing" in proc.stderr  # [[Nowhere]] in Index.md, broken long ago


def test_warnings_alone_never_block_the_hook(tmp_path: Path) -> None:
    root = _repo(tmp_path, "new-only")
    _append(root, "Tagged.md", "\nMore #Rust here.\n")  # a new KB205: a warning
    proc = run_kbase("check", "--staged", "Tagged.md", cwd=root)
    assert proc.returncode == 0
    assert "Tagged.md:5:6: KB205 (warning)" in proc.stdout
    assert run_kbase("check", "--staged", "--fail-on", "warning", "Tagged.md",
                     cwd=root).returncode == 1


def test_the_first_commit_has_no_old_problems(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    shutil.copytree(HOOKS / "new-only" / "vault", root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 1 and "KB101 [[Missing]]" in proc.stdout
    assert "pre-existing" not in proc.stderr


def _stage_config(root: Path, name: str) -> None:
    shutil.copy(HOOKS / "config-change" / name, root / ".kbase.yml")
    git(root, "add", ".kbase.yml")


def test_a_commit_that_only_breaks_the_config_is_rejected(tmp_path: Path) -> None:
    root = _repo(tmp_path, "config-change")
    _stage_config(root, "bad.kbase.yml")
    proc = run_kbase("check", "--staged", cwd=root)  # pre-commit: always_run, no files
    assert proc.returncode == 2
    assert ".kbase.yml:2:3: KB900 unknown key `vault.folderz`; did you mean `folders`?" \
        in proc.stderr
    _stage_config(root, "unknown-code.kbase.yml")
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 2 and ".kbase.yml:5:5: KB900 " in proc.stderr


def test_a_tighter_policy_rechecks_the_notes_it_affects(tmp_path: Path) -> None:
    root = _repo(tmp_path, "config-change")
    _stage_config(root, "tighter.kbase.yml")
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 1
    assert proc.stdout.startswith("Python.md:3:1: KB201 #python is not an allowed tag")
    assert "2 of 3 notes checked" in proc.stderr  # the notes with tags, not Plain.md


def test_a_config_change_no_check_reads_checks_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path, "config-change")
    _stage_config(root, "index-only.kbase.yml")
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 0 and "0 of 3 notes checked" in proc.stderr


def test_a_named_untracked_note_is_checked_with_a_notice(tmp_path: Path) -> None:
    root = _repo(tmp_path, "untracked")
    shutil.copy(HOOKS / "untracked" / "NEW.md", root / "NEW.md")
    shutil.copy(HOOKS / "untracked" / "Also-New.md", root / "Also New.md")
    proc = run_kbase("check", "NEW.md", cwd=root)
    assert proc.returncode == 1
    # [[Also New]], untracked too, resolves: the work tree as Obsidian sees it.
    assert proc.stdout == "NEW.md:3:54: KB101 [[Missing]]: no note named `Missing`\n"
    assert "1 untracked file(s) checked as they are in the work tree" in proc.stderr
    assert "ignored" not in proc.stderr
    missing = run_kbase("check", "Nope.md", cwd=root)
    assert missing.returncode == 0 and "ignored 1 argument(s)" in missing.stderr


@pytest.mark.parametrize("args", [(), ("--all-findings",)])
def test_config_commit_findings_are_new_against_heads_config(tmp_path: Path,
                                                             args: tuple[str, ...]) -> None:
    root = _repo(tmp_path, "config-change")
    write(root, {"Python.md": "# Python\n\n#python #java\n"})
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "java",
        "--no-verify")
    _stage_config(root, "tighter.kbase.yml")
    proc = run_kbase("check", "--staged", *args, cwd=root)
    codes = [ln.split(":", 3)[:2] + ln.split()[1:2] for ln in proc.stdout.splitlines()]
    # #java was already outside the policy at HEAD; #python is what the new policy adds.
    want = [["Python.md", "3", "KB201"]] if not args else \
        [["Python.md", "3", "KB201"], ["Python.md", "3", "KB201"]]
    assert codes == want and proc.returncode == 1


def test_a_handovers_old_gaps_do_not_block_an_edit_that_fills_one(tmp_path: Path) -> None:
    # The HEAD side reads the handover's HEAD text (not the staged one): the section the
    # edit adds counts as fixed, the five gaps left are pre-existing, a new one blocks.
    root = _repo(tmp_path, "handover-edit")
    _append(root, "handovers/h.md", "\n## Key Decisions\n- Kept the old API: callers use it.\n")
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 0 and proc.stdout == ""
    assert "no new problems, 5 pre-existing" in proc.stderr
    text = (root / "handovers/h.md").read_text(encoding="utf-8")
    (root / "handovers/h.md").write_text(
        text.replace("- `a.md` - changed\n", "- `a.md` - changed\n- `gone.md` - added\n"),
        encoding="utf-8")
    git(root, "add", "-A")
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "handovers/h.md:12:4: KB406 `gone.md` does not exist and was not deleted in this change"]
