"""Git objects by id: reading blobs in one process, and naming content as git would."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kbase_ci.errors import GitError
from kbase_ci.git.process import finish, git, start, stop
from kbase_ci.state.folders import spool


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


def write_blobs(cwd: Path, targets: Iterable[tuple[str, Path]]) -> None:
    """Write each blob to its file, streamed through one `git cat-file --batch` (a blob
    of gigabytes is never held in memory whole)."""
    pairs = list(targets)
    if not pairs:
        return
    with spool() as ask:
        ask.write(("\n".join(sha for sha, _ in pairs) + "\n").encode())
        ask.seek(0)
        proc = start(["cat-file", "--batch"], cwd, stdin=ask)
        assert proc.stdout is not None
        try:
            for sha, dest in pairs:
                header = proc.stdout.readline().decode().split(" ")
                if len(header) != 3:
                    raise GitError(f"git object {sha} is missing")
                left = int(header[2])
                with dest.open("wb") as fh:
                    while left:
                        block = proc.stdout.read(min(left, 1 << 20))
                        if not block:
                            raise GitError(f"git cat-file stopped inside object {sha}")
                        fh.write(block)
                        left -= len(block)
                proc.stdout.read(1)  # the newline after the content
        except BaseException:
            stop(proc)
            raise
        finish(proc, ["cat-file", "--batch"])


def blob_sha(data: bytes) -> str:
    """The id git would give `data` as a blob (what `git hash-object` prints)."""
    import hashlib  # only work-tree and walk modes hash content; a hook never does

    h = hashlib.sha1(b"blob %d\0" % len(data))  # git's object id, not security
    h.update(data)
    return h.hexdigest()


def object_id(data: bytes, kind: str, fmt: str) -> str:
    """The id git gives `data` as an object of `kind`, without asking git."""
    import hashlib

    # sha1 here is git's object naming, not a security choice.
    h = hashlib.sha256() if fmt == "sha256" else hashlib.sha1()
    h.update(b"%s %d\0" % (kind.encode(), len(data)))
    h.update(data)
    return h.hexdigest()


def blob_sizes(cwd: Path, shas: Iterable[str]) -> dict[str, int]:
    """Byte size of each blob, from object headers only (`cat-file --batch-check`); ids
    that are missing or not blobs are left out."""
    return {h[0]: h[2] for h in _headers(cwd, list(dict.fromkeys(shas)))
            if h is not None and h[1] == "blob"}


def tree_blobs(cwd: Path, tree: str, paths: Iterable[str]) -> dict[str, tuple[str, int]]:
    """Path -> (blob id, size) of those of `paths` that are blobs in `tree`, from object
    headers only (a caller bounds what it then reads)."""
    wanted = [p for p in dict.fromkeys(paths) if "\n" not in p]
    headers = _headers(cwd, [f"{tree}:{p}" for p in wanted])
    return {path: (h[0], h[2]) for path, h in zip(wanted, headers, strict=False)
            if h is not None and h[1] == "blob"}


def _headers(cwd: Path, names: list[str]) -> list[tuple[str, str, int] | None]:
    """(object id, type, size) of each object name (one `cat-file --batch-check` line
    each, in order), None for one git reports missing or ambiguous."""
    if not names:
        return []
    out = git(["cat-file", "--batch-check", "--buffer"], cwd,
              input="".join(f"{n}\n" for n in names).encode())
    got: list[tuple[str, str, int] | None] = []
    for line in out.decode("utf-8", "replace").splitlines():
        parts = line.split(" ")
        got.append((parts[0], parts[1], int(parts[2]))
                   if len(parts) == 3 and parts[2].isdigit() else None)
    return got
