"""Real pre-commit runs against a real hook repository built from this working tree.

One hook repository and one PRE_COMMIT_HOME per session, so pre-commit builds the hook
environment (pip-installing kbase-ci and its dependencies) once for every `git commit`
and `pre-commit run` here. `pre-commit try-repo` always builds its own environment in
a temporary store (pre-commit's design); the shared pip cache makes that one quick.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV, REPO, write

pytest.importorskip("pre_commit")
pytestmark = pytest.mark.slow

_TIMEOUT = 900  # the first run pip-installs the hook environment


class Hooks:
    """The session's hook repository and pre-commit environment variables."""

    def __init__(self, repo: Path, rev: str, home: Path) -> None:
        self.repo, self.rev, self.home = repo, rev, home

    def env(self, cwd: Path) -> dict[str, str]:
        return {**os.environ, **GIT_ENV, "HOME": str(cwd),
                "PRE_COMMIT_HOME": str(self.home / "pre-commit"),
                "PIP_CACHE_DIR": str(self.home / "pip"),
                "VIRTUALENV_OVERRIDE_APP_DATA": str(self.home / "virtualenv"),
                "PIP_DISABLE_PIP_VERSION_CHECK": "1", "NO_COLOR": "1", "TERM": "dumb"}

    def config(self, *hook_ids: str) -> str:
        hooks = "".join(f"      - id: {h}\n" for h in hook_ids)
        return (f"repos:\n  - repo: {self.repo}\n    rev: {self.rev}\n    hooks:\n{hooks}")


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=_TIMEOUT, check=False)


def _git(cwd: Path, env: dict[str, str], *args: str) -> str:
    proc = _run(["git", *args], cwd, env)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stdout}{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="session")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hooks]:
    """A git repository holding this working tree (what users point `repo:` at)."""
    base = tmp_path_factory.mktemp("hooks")
    repo = base / "kbase-ci"
    repo.mkdir()
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=REPO, capture_output=True,
                            check=True).stdout
    for raw in listed.split(b"\0"):
        rel = raw.decode("utf-8", "surrogateescape")
        src = REPO / rel
        if rel and src.is_file() and not src.is_symlink():
            dest = repo / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    h = Hooks(repo, "", base)
    env = h.env(repo)
    _git(repo, env, "init", "-q", "-b", "main")
    _git(repo, env, "add", "-A")
    _git(repo, env, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "kbase-ci hooks")
    h.rev = _git(repo, env, "rev-parse", "HEAD").strip()
    yield h


@pytest.fixture
def user_repo(tmp_path: Path, hooks: Hooks) -> Callable[..., Path]:
    """A vault repository with the given hooks installed and `files` committed (the
    commit itself goes through the hooks, so it also proves a clean vault commits)."""

    def make(files: dict[str, str | bytes], *hook_ids: str) -> Path:
        root = tmp_path / "vault"
        root.mkdir()
        env = hooks.env(root)
        _git(root, env, "init", "-q", "-b", "main")
        _git(root, env, "config", "commit.gpgsign", "false")
        write(root, {".pre-commit-config.yaml": hooks.config(*(hook_ids or ("kbase-check",))),
                     **files})
        proc = _run([sys.executable, "-m", "pre_commit", "install"], root, env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        _git(root, env, "add", "-A")
        done = commit(root, hooks, "init")
        assert done.returncode == 0, done.stdout + done.stderr
        return root

    return make


def commit(root: Path, hooks: Hooks, message: str) -> subprocess.CompletedProcess[str]:
    """A real `git commit`: the installed pre-commit hook runs."""
    proc = _run(["git", "commit", "-m", message], root, hooks.env(root))
    proc.stdout += proc.stderr  # pre-commit's report goes to stdout, git's to stderr
    return proc


def head(root: Path, hooks: Hooks) -> str:
    return _git(root, hooks.env(root), "rev-parse", "HEAD").strip()


VAULT: dict[str, str | bytes] = {
    "notes/Old.md": "# Old\n\n## Setup\n\nsteps\n",
    "notes/A.md": "# A\n\n## Usage\n",
    "U.md": "see [[Old]] and [[A#Usage]]\n",
}


def test_broken_link_blocks_the_commit(user_repo: Callable[..., Path], hooks: Hooks) -> None:
    root = user_repo(VAULT)
    before = head(root, hooks)
    write(root, {"notes/A.md": "# A\n\n## Usage\n\n[[Nowhere]]\n"})
    _git(root, hooks.env(root), "add", "-A")
    proc = commit(root, hooks, "broken")
    assert proc.returncode != 0
    assert "notes/A.md:5:1: KB101 [[Nowhere]]: no note named `Nowhere`" in proc.stdout
    assert head(root, hooks) == before


def test_rename_breaking_an_untouched_note_is_blocked_with_suggestion(
        user_repo: Callable[..., Path], hooks: Hooks) -> None:
    root = user_repo(VAULT)
    _git(root, hooks.env(root), "mv", "notes/Old.md", "notes/New.md")
    proc = commit(root, hooks, "rename")
    assert proc.returncode != 0
    assert ("U.md:1:5: KB101 [[Old]]: `notes/Old.md` was renamed to `notes/New.md` in this "
            "commit; did you mean [[New]]?") in proc.stdout


def test_deleting_a_heading_breaks_an_anchor_in_an_untouched_note(
        user_repo: Callable[..., Path], hooks: Hooks) -> None:
    root = user_repo(VAULT)
    write(root, {"notes/A.md": "# A\n\nno more usage\n"})
    _git(root, hooks.env(root), "add", "-A")
    proc = commit(root, hooks, "drop heading")
    assert proc.returncode != 0
    assert ("U.md:1:17: KB111 [[A#Usage]]: heading `Usage` was removed from `notes/A.md` in "
            "this commit") in proc.stdout


def test_fix_links_repairs_a_rename_and_the_second_commit_passes(
        user_repo: Callable[..., Path], hooks: Hooks) -> None:
    root = user_repo(VAULT, "kbase-fix-links", "kbase-check")
    env = hooks.env(root)
    _git(root, env, "mv", "notes/Old.md", "notes/New.md")
    first = commit(root, hooks, "rename")
    assert first.returncode != 0
    assert "U.md:1:5: [[Old]] -> [[New]]" in first.stdout
    assert "files were modified by this hook" in first.stdout
    # kbase-check in the same run does not report the link the fixer just rewrote again
    assert "KB101" not in first.stdout, first.stdout
    assert "1 broken link(s) not repeated: `kbase fix` rewrote them" in first.stdout
    assert (root / "U.md").read_text() == "see [[New]] and [[A#Usage]]\n"
    _git(root, env, "add", "-A")
    second = commit(root, hooks, "rename, links fixed")
    assert second.returncode == 0, second.stdout
    assert _git(root, env, "show", "HEAD:U.md") == "see [[New]] and [[A#Usage]]\n"


def test_only_staged_content_is_judged(user_repo: Callable[..., Path], hooks: Hooks) -> None:
    root = user_repo(VAULT)
    env = hooks.env(root)
    write(root, {"notes/A.md": "# A\n\n## Usage\n\n[[Old]] staged and fine\n"})
    _git(root, env, "add", "-A")
    write(root, {"notes/A.md": "# A\n\n## Usage\n\n[[Nowhere]] unstaged\n"})
    proc = commit(root, hooks, "staged part is fine")
    assert proc.returncode == 0, proc.stdout
    # pre-commit stashed the unstaged edit and put it back.
    assert (root / "notes/A.md").read_text() == "# A\n\n## Usage\n\n[[Nowhere]] unstaged\n"
    _git(root, env, "add", "-A")
    write(root, {"notes/A.md": "# A\n\n## Usage\n\nfixed, but only in the work tree\n"})
    proc = commit(root, hooks, "staged part is broken")
    assert proc.returncode != 0 and "KB101 [[Nowhere]]" in proc.stdout


def test_files_outside_the_vault_folders_are_ignored(
        user_repo: Callable[..., Path], hooks: Hooks) -> None:
    root = user_repo({**VAULT, ".kbase.yml": "vault:\n  folders: [notes]\n",
                      "README.md": "# Readme\n"})
    env = hooks.env(root)
    write(root, {"README.md": "# Readme\n\n[[not a note link]]\n", "docs/x.md": "[[nope]]\n"})
    _git(root, env, "add", "-A")
    proc = commit(root, hooks, "outside the vault")
    assert proc.returncode == 0, proc.stdout
    write(root, {"notes/A.md": "[[nope]]\n"})
    _git(root, env, "add", "-A")
    assert commit(root, hooks, "inside").returncode != 0


def test_pre_commit_run_all_files(user_repo: Callable[..., Path], hooks: Hooks) -> None:
    root = user_repo(VAULT)
    env = hooks.env(root)
    ok = _run([sys.executable, "-m", "pre_commit", "run", "--all-files"], root, env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    write(root, {"notes/B.md": "[[Old#Nope]]\n"})
    _git(root, env, "add", "-A")
    bad = _run([sys.executable, "-m", "pre_commit", "run", "kbase-check"], root, env)
    assert bad.returncode == 1
    assert "notes/B.md:1:1: KB111 [[Old#Nope]]" in bad.stdout


def test_try_repo(tmp_path: Path, hooks: Hooks) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    env = hooks.env(root)
    _git(root, env, "init", "-q", "-b", "main")
    write(root, {**VAULT, "notes/Bad.md": "![[missing.png]]\n"})
    _git(root, env, "add", "-A")
    proc = _run([sys.executable, "-m", "pre_commit", "try-repo", str(hooks.repo), "kbase-check",
                 "--all-files"], root, env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "notes/Bad.md:1:1: KB102 ![[missing.png]]" in proc.stdout


def test_a_warning_only_commit_shows_the_warning(user_repo: Callable[..., Path],
                                                 hooks: Hooks) -> None:
    # pre-commit hides a passing hook's output: the manifest's `verbose: true` shows it
    root = user_repo({**VAULT, "notes/Tagged.md": "# Tagged\n\n#rust\n"})
    env = hooks.env(root)
    write(root, {"notes/A.md": "# A\n\n## Usage\n\nMore #Rust here.\n",
                 "notes/Latin.md": "# Latin\n"})
    _git(root, env, "add", "-A")
    proc = commit(root, hooks, "a tag in another case")
    assert proc.returncode == 0, proc.stdout  # a warning does not block
    assert ("notes/A.md:5:6: KB205 (warning) #Rust is spelled in another case in other "
            "notes: #rust (1 note); did you mean #rust?") in proc.stdout
    assert "- hook id: kbase-check" in proc.stdout
    # a clean commit says so in one line
    write(root, {"notes/Latin.md": "# Latin\n\nplain text\n"})
    _git(root, env, "add", "-A")
    clean = commit(root, hooks, "clean")
    assert clean.returncode == 0, clean.stdout
    said = clean.stdout.split("- duration:", 1)[1].splitlines()[1:]
    assert [ln for ln in said if ln.strip() and not ln.startswith("[main ")] == [
        "kbase: 1 of 5 notes checked, no problems"]
    # and `verbose: false` in the user's config keeps a passing hook quiet again
    write(root, {".pre-commit-config.yaml": hooks.config("kbase-check").replace(
        "- id: kbase-check\n", "- id: kbase-check\n        verbose: false\n"),
        "notes/Other.md": "# Other\n\n#Rust too\n"})  # a new note: its KB205 is new
    _git(root, env, "add", "-A")
    quiet = commit(root, hooks, "quiet")
    assert quiet.returncode == 0 and "KB205" not in quiet.stdout, quiet.stdout


def test_a_note_that_is_not_utf8_is_rejected(user_repo: Callable[..., Path],
                                             hooks: Hooks) -> None:
    root = user_repo(VAULT, "kbase-input")
    before = head(root, hooks)
    write(root, {"notes/Latin.md": "# Caf\xe9\n".encode("latin-1")})
    _git(root, hooks.env(root), "add", "-A")
    proc = commit(root, hooks, "latin-1")
    assert proc.returncode != 0
    assert "notes/Latin.md:1:6: KB001 invalid UTF-8 (byte 0xe9)" in proc.stdout
    assert head(root, hooks) == before
