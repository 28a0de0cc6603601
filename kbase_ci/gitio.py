"""Git plumbing through subprocess: the fast paths measured in dependency-findings.md.

`ls-files -s -z` lists 10k paths in ~16 ms and one `cat-file --batch` reads 1000 blobs
in ~0.15 s; GitPython's per-path tree lookups are 40x slower, so it is not used here.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import GitError

# Git must never prompt or page; note names are file names, never pathspec globs
# (a note called `[draft] *.md` must match only itself).
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C",
            "GIT_LITERAL_PATHSPECS": "1"}


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """One file of a git listing (`ls-files -s`, `ls-tree`): path, blob id and mode."""

    path: str
    """Relative to the directory ls-files ran in, POSIX."""
    sha: str
    mode: str


# Processes started ahead of need (`prefetch`), by (folder, arguments): a hook knows
# from its command line which git questions it will ask, and git answers them on the
# other core while Python imports the check code. `git` takes an answer from here when
# the same command in the same folder was started ahead; nothing else differs.
_AHEAD: dict[tuple[str, tuple[str, ...]], subprocess.Popen[bytes]] = {}


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


def stop(proc: subprocess.Popen[bytes]) -> None:
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


def start(args: Sequence[str], cwd: Path) -> subprocess.Popen[bytes]:
    """Start git without waiting (`finish` collects it): two git processes that do not
    depend on each other then run on both cores while Python parses the first."""
    try:
        return subprocess.Popen(["git", *args], cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                env={**os.environ, **_GIT_ENV})
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc


def finish(proc: subprocess.Popen[bytes], args: Sequence[str]) -> bytes:
    out, err = proc.communicate()
    if proc.returncode != 0:
        msg = err.decode("utf-8", "replace").strip()
        raise GitError(f"git {' '.join(args[:2])} failed: {msg}")
    return out


def git_text(args: Sequence[str], cwd: Path, check: bool = True) -> str:
    return git(args, cwd, check=check).decode("utf-8", "surrogateescape").strip()


def toplevel(path: Path) -> Path | None:
    """The work tree root containing `path`, or None outside a git work tree."""
    dirs = repo_dirs(path)
    return dirs[0] if dirs is not None else None


def find_root(start: Path | None = None) -> Path:
    """The vault root for a command: the git work tree around `start`, else `start`."""
    here = (start or Path.cwd()).resolve()
    return toplevel(here) or here


# Positive answers only, per process: a command asks for the same folder several times
# (its root, its vault, its index source) and each asks cost a git process (~3 ms). A
# folder that is not in a repository now may become one (`git init`), so misses are
# asked again.
_DIRS: dict[str, tuple[Path, Path]] = {}
REPO_DIRS = ("rev-parse", "--show-toplevel", "--absolute-git-dir")


def repo_dirs(path: Path) -> tuple[Path, Path] | None:
    """(work tree root, absolute git dir) around `path` in one git process, or None
    outside a git work tree (a hook pays ~3 ms per git process)."""
    key = os.path.abspath(path)
    hit = _DIRS.get(key)
    if hit is not None:
        return hit
    try:
        out = git(REPO_DIRS, path, check=True)
    except GitError:
        return None
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 2 or not lines[0] or not lines[1]:
        return None
    found = Path(lines[0]), Path(lines[1])
    _DIRS[key] = found
    return found


def git_dir(path: Path) -> Path:
    dirs = repo_dirs(path)
    if dirs is not None:
        return dirs[1]
    return Path(git_text(["rev-parse", "--absolute-git-dir"], path))  # a bare repository


def head_commit(path: Path) -> str | None:
    out = git(["rev-parse", "--verify", "-q", "HEAD"], path, check=False)
    return out.decode().strip() or None


def ls_files(cwd: Path) -> list[IndexEntry]:
    """Tracked files under `cwd` (paths relative to it), stage 0 or the first stage seen."""
    return [IndexEntry(path, sha, mode) for path, sha, mode in ls_files_rows(cwd)]


LS_FILES = ("ls-files", "-s", "-z", "--", ".")


def ls_files_rows(cwd: Path) -> list[tuple[str, str, str]]:
    """`ls_files` as plain (path, sha, mode) tuples: the hook lists 10k files on every
    commit, and building 10k records costs more than running git (~10 ms)."""
    return ls_files_parse(git(LS_FILES, cwd))


def ls_files_parse(out: bytes) -> list[tuple[str, str, str]]:
    """The rows of `git ls-files -s -z` output (`LS_FILES`)."""
    # One decode and string slicing: a regex or per-record decode costs ~2x as much.
    # A record is "<mode> <sha> <stage>\t<path>"; the sha length depends on the hash.
    records = out.decode("utf-8", "surrogateescape").split("\0")
    records.pop()  # the text after the last NUL is empty
    rows: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for rec in records:
        tab = rec.index("\t")
        path = rec[tab + 1:]
        if rec[tab - 1] != "0":  # unmerged paths list stages 1-3; one entry is enough
            if path in seen:
                continue
            seen.add(path)
        rows.append((path, rec[7:tab - 2], rec[:6]))
    return rows


_LS_TREE_RECORD = re.compile(rb"(\d{6}) (\w+) ([0-9a-f]{40,64})\t([^\0]*)\0")


def ls_tree(cwd: Path, rev: str, paths: Sequence[str] = ()) -> list[IndexEntry]:
    """Files of commit `rev` under `cwd` (or just `paths`), relative to `cwd`."""
    spec = [f"./{p}" for p in paths] if paths else ["."]
    out = git(["ls-tree", "-r", "-z", rev, "--", *spec], cwd)
    return [IndexEntry(raw.decode("utf-8", "surrogateescape"), sha.decode(), mode.decode())
            for mode, kind, sha, raw in _LS_TREE_RECORD.findall(out) if kind == b"blob"
            or mode == b"160000"]


def modified_in_worktree(cwd: Path) -> set[str]:
    """Tracked paths (relative to `cwd`) whose work-tree content differs from the index."""
    out = git(["diff-files", "-z", "--name-only", "--relative", "--", "."], cwd)
    return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}


# --branch for HEAD's commit id (`# branch.oid`); --no-ahead-behind: no history walk.
_STATUS = ("status", "--porcelain=v2", "-z", "--branch", "--no-ahead-behind",
           "--untracked-files=no", "--ignore-submodules=all", "--no-renames", "--", ".")


def start_status(cwd: Path, *, write_index: bool = True) -> subprocess.Popen[bytes]:
    """Start `git status` for `worktree_status`. It costs what `git diff-files` costs
    (both stat every tracked file), and unlike it refreshes git's stat data and writes the
    index back when entries are "racily clean" (written in the same second as the index,
    as a fresh clone's are): otherwise every later `diff-files` hashes all of them again.
    `write_index=False` (`--no-optional-locks`) leaves the index file alone."""
    return start(_STATUS if write_index else ("--no-optional-locks", *_STATUS), cwd)


def worktree_status(proc: subprocess.Popen[bytes], prefix: str
                    ) -> tuple[str | None, set[str], bool]:
    """From a `start_status` process: (HEAD's commit id or None before the first commit,
    paths whose work-tree content may differ from the index (modified, deleted or
    unmerged), whether any tracked path differs from HEAD, staged or not). Paths are
    relative to the folder that is `prefix` (POSIX, ending in `/`, or "") below the
    repository root, as git names paths from the root in this format."""
    out = finish(proc, ("status",))
    head: str | None = None
    found: set[str] = set()
    changed = False
    for rec in out.split(b"\0"):
        kind = rec[:2]
        if kind == b"# ":
            if rec.startswith(b"# branch.oid ") and rec[13:] != b"(initial)":
                head = rec[13:].decode()
            continue
        if kind == b"1 ":  # "1 XY sub mH mI mW hH hI path"
            parts = rec.split(b" ", 8)
        elif kind == b"u ":  # "u XY sub m1 m2 m3 mW h1 h2 h3 path": a conflict
            parts = rec.split(b" ", 10)
        else:
            continue
        if len(parts) < 9:
            continue
        changed = True
        if kind == b"1 " and parts[1][1:2] == b".":
            continue  # staged only: the work tree has what the index has
        path = parts[-1].decode("utf-8", "surrogateescape")
        if path.startswith(prefix):
            found.add(path[len(prefix):])
    return head, found, changed


def read_blobs(cwd: Path, shas: Iterable[str]) -> dict[str, bytes]:
    """Read many blobs with one `git cat-file --batch` process."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    out = git(["cat-file", "--batch"], cwd, input=("\n".join(wanted) + "\n").encode())
    blobs: dict[str, bytes] = {}
    pos = 0
    for sha in wanted:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].decode()
        parts = header.split(" ")
        if len(parts) == 2 and parts[1] == "missing":
            raise GitError(f"git object {sha} is missing")
        size = int(parts[2])
        start = nl + 1
        blobs[sha] = out[start:start + size]
        pos = start + size + 1  # content is followed by a newline
    return blobs


def blob_sha(data: bytes) -> str:
    """The id git would give `data` as a blob (what `git hash-object` prints)."""
    import hashlib  # only work-tree and walk modes hash content; a hook never does

    h = hashlib.sha1(b"blob %d\0" % len(data))  # git's object id, not security
    h.update(data)
    return h.hexdigest()


def run(args: Sequence[str], cwd: Path, *, input: bytes | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run git and hand back the process: for callers that need the exit status or stderr
    (`merge-base --is-ancestor`, `push`), or extra environment (`commit-tree` identity)."""
    full_env = {**os.environ, **(env or {}), **_GIT_ENV}
    try:
        return subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                              env=full_env, check=False)
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH") from exc
