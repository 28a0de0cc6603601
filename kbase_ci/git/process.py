"""Running git: the one place kbase starts a process (the other `kbase_ci.git` modules
name the questions; nothing outside this package runs git or imports subprocess).

Plumbing through subprocess is the fast path measured in dependency-findings.md:
`ls-files -s -z` lists 10k paths in ~16 ms and one `cat-file --batch` reads 1000 blobs
in ~0.15 s; GitPython's per-path tree lookups are 40x slower, so it is not used here.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO

from kbase_ci.errors import GitError

# Git must never prompt or page; note names are file names, never pathspec globs
# (a note called `[draft] *.md` must match only itself).
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C",
            "GIT_LITERAL_PATHSPECS": "1"}


Process = subprocess.Popen[bytes]
"""A git process started and not yet collected (`start`, then `finish` or `stop`)."""

# Processes started ahead of need (`prefetch`), by (folder, arguments): a hook knows
# from its command line which git questions it will ask, and git answers them on the
# other core while Python imports the check code. `git` takes an answer from here when
# the same command in the same folder was started ahead; nothing else differs.
_AHEAD: dict[tuple[str, tuple[str, ...]], Process] = {}


def prefetch(cwd: Path, commands: Iterable[Sequence[str]]) -> None:
    """Start `commands` in `cwd` now; `git` with the same arguments collects them."""
    for args in commands:
        key = (os.path.abspath(cwd), tuple(args))
        if key not in _AHEAD:
            try:
                _AHEAD[key] = start(args, cwd)
            except GitError:
                return


def drop_prefetched() -> int:
    """Stop and reap what was started ahead and never asked for; how many there were."""
    left = list(_AHEAD.values())
    _AHEAD.clear()
    for proc in left:
        stop(proc)
    return len(left)


def stop(proc: Process) -> None:
    """Kill a git process whose answer is no longer wanted, and reap it."""
    if proc.poll() is None:
        proc.kill()
    proc.communicate()


def git(args: Sequence[str], cwd: Path, *, input: bytes | None = None,
        check: bool = True) -> bytes:
    ahead = _AHEAD.pop((os.path.abspath(cwd), tuple(args)), None) if input is None else None
    if ahead is not None:
        return finish(ahead, args) if check else ahead.communicate()[0]
    env = {**os.environ, **_GIT_ENV}
    try:
        proc = subprocess.run(
            ["git", *args], cwd=cwd, input=input, capture_output=True, env=env, check=False
        )
    except FileNotFoundError as exc:  # no git binary at all
        raise GitError("git is not installed or not on PATH") from exc
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {' '.join(args[:2])} failed: {err}")
    return proc.stdout


def start(args: Sequence[str], cwd: Path, *, stdin: IO[bytes] | None = None) -> Process:
    """Start git without waiting (`finish` collects it): two git processes that do not
    depend on each other then run on both cores while Python parses the first. `stdin`:
    a file git reads its input from (so a streamed answer cannot deadlock on it)."""
    try:
        return subprocess.Popen(["git", *args], cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                stdin=stdin if stdin is not None else subprocess.DEVNULL,
                                env={**os.environ, **_GIT_ENV})
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc


def finish(proc: Process, args: Sequence[str]) -> bytes:
    out, err = proc.communicate()
    if proc.returncode != 0:
        msg = err.decode("utf-8", "replace").strip()
        raise GitError(f"git {' '.join(args[:2])} failed: {msg}")
    return out


def git_text(args: Sequence[str], cwd: Path, check: bool = True) -> str:
    return git(args, cwd, check=check).decode("utf-8", "surrogateescape").strip()


def run(args: Sequence[str], cwd: Path, *, input: bytes | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run git and hand back the process: for callers that need the exit status or stderr
    (`merge-base --is-ancestor`, `push`), or extra environment (`commit-tree` identity).
    `timeout`: seconds before git is killed (GitError), for anything that may wait on a
    network."""
    full_env = {**os.environ, **(env or {}), **_GIT_ENV}
    try:
        return subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                              env=full_env, check=False, timeout=timeout)
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args[:2])} gave no answer within {timeout:g} s: "
                       "stopped") from None
