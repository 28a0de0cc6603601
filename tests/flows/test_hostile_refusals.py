"""Issue 28: an index branch refused by a query was streamed out of git and hashed again
by every later query (a 7.6 GiB forged branch: 77 s each). A refusal is remembered in the
`refused` memo by the branch's tree id (which pins every byte): the next query refuses
the same tree without reading a blob of it, with the same reason."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.conftest import GIT_ENV, git, run_kbase

NOTES = {"A.md": "# A\n\nsee [[B]]\n", "B.md": "# B\n\n[[A]]\n", ".gitignore": ".kbase/\n"}


def _hash(root: Path, data: bytes) -> str:
    return subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=data,
                          env={**os.environ, **GIT_ENV}, check=True,
                          capture_output=True).stdout.decode().strip()


def test_a_refused_branch_is_not_read_again(make_repo: Callable[..., Path]) -> None:
    root = make_repo(NOTES)
    assert run_kbase("index", "--offline", cwd=root).returncode == 0
    index = root / ".kbase"
    big = _hash(root, b'{"a": [0]}' + b" " * 20_000_000)  # not the manifest's names.json
    lines = []
    for p in sorted(index.rglob("*")):
        if p.is_file():
            rel = p.relative_to(index).as_posix()
            sha = big if rel == "names.json" else _hash(root, p.read_bytes())
            lines.append((rel, sha))
    tree = _mktree(root, lines)
    git(root, "update-ref", "refs/heads/kbase-index",
        git(root, "commit-tree", tree, "-m", "forged").strip())
    for p in sorted(index.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    index.rmdir()

    first = run_kbase("backlinks", "A", "--offline", cwd=root)
    assert first.returncode == 0, first.stderr
    assert "names.json does not match the manifest" in first.stderr
    assert json.loads(first.stdout)["index"]["origin"] == "temporary"
    # The blob is gone: a query that read the branch again would fail another way.
    loose = root / ".git" / "objects" / big[:2] / big[2:]
    loose.unlink()
    second = run_kbase("backlinks", "A", "--offline", cwd=root)
    assert second.returncode == 0, second.stderr
    assert "names.json does not match the manifest" in second.stderr
    assert "(refused before)" in second.stderr
    assert json.loads(second.stdout)["backlinks"] == json.loads(first.stdout)["backlinks"]


def _mktree(root: Path, files: list[tuple[str, str]]) -> str:
    """A tree of `files` (path, blob id), nested folders included, by `git mktree`."""
    def build(prefix: str) -> str:
        entries, subdirs = [], set()
        for rel, sha in files:
            if not rel.startswith(prefix):
                continue
            rest = rel[len(prefix):]
            if "/" in rest:
                subdirs.add(rest.split("/", 1)[0])
            else:
                entries.append(f"100644 blob {sha}\t{rest}")
        entries += [f"040000 tree {build(prefix + d + '/')}\t{d}" for d in sorted(subdirs)]
        return subprocess.run(["git", "mktree"], cwd=root, input="\n".join(entries) + "\n",
                              text=True, check=True, capture_output=True).stdout.strip()
    return build("")
