"""Issue 28, CI rebuilds from source: the push job never republishes bytes of the index
branch it did not compute itself from the checked-out commit. A forged shard (its hashes
recomputed in the manifest) used to be reused as "unchanged" and laundered under the
job's own commit; a branch holding a symbolic link made every push job exit 2, so CI could
never replace it; a manifest blob of any size was read whole."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.ci_support import commit_files
from tests.conftest import GIT_ENV, git
from tests.flows.test_ci_index import _clone, _finish, _origin, _push_env, _remote_index, _start


def _branch_files(repo: Path, ref: str) -> dict[str, bytes]:
    names = git(repo, "ls-tree", "-r", "--name-only", ref).split("\n")
    return {n: subprocess.run(["git", "cat-file", "blob", f"{ref}:{n}"], cwd=repo,
                              capture_output=True, check=True).stdout for n in names if n}


def _push_tree(repo: Path, parent: str, entries: list[tuple[str, str, bytes]]) -> None:
    """Commit `entries` (mode, path, bytes) on top of `parent` as the remote's index
    branch, with git plumbing (as anyone with push access could)."""
    env = {**os.environ, **GIT_ENV, "GIT_INDEX_FILE": str(repo.parent / "forge.idx")}

    def run(*args: str, data: bytes | None = None) -> str:
        return subprocess.run(["git", *args], cwd=repo, env=env, input=data, check=True,
                              capture_output=True).stdout.decode().strip()

    for mode, rel, data in entries:
        sha = run("hash-object", "-w", "--stdin", data=data)
        run("update-index", "--add", "--cacheinfo", f"{mode},{sha},{rel}")
    commit = run("commit-tree", run("write-tree"), "-p", parent, "-m", "forged")
    run("push", "-q", "-f", "origin", f"{commit}:refs/heads/kbase-index")
    os.unlink(env["GIT_INDEX_FILE"])


def _forged(files: dict[str, bytes], rel: str, data: bytes) -> list[tuple[str, str, bytes]]:
    files = {**files, rel: data}
    manifest = json.loads(files["manifest.json"])
    manifest["files"] = {r: hashlib.sha256(d).hexdigest() for r, d in sorted(files.items())
                         if r != "manifest.json"}
    files["manifest.json"] = json.dumps(manifest).encode()
    return [("100644", r, d) for r, d in sorted(files.items())]


def _run(bare: Path, tmp: Path, name: str) -> str:
    fresh = _clone(bare, tmp / f"clone-{name}")
    code, out = _finish(_start(fresh, _push_env(tmp, fresh, name)))
    assert code == 0, out
    return out


def test_a_forged_shard_is_never_republished(tmp_path: Path) -> None:
    bare, clone = _origin(tmp_path)
    _run(bare, tmp_path, "run1")
    git(clone, "fetch", "-q", "origin", "kbase-index")
    files = _branch_files(clone, "FETCH_HEAD")
    shard = next(r for r in files if r.startswith("shards/") and r.endswith("chunks.json")
                 and "topics" in r)
    forged = json.dumps({"counts": [1, 1], "poison": "x" * 64}).encode()
    tip = git(clone, "rev-parse", "FETCH_HEAD").strip()
    _push_tree(clone, tip, _forged(files, shard, forged))
    # A push that changes another shard only: Topics/ is "unchanged".
    commit_files(clone, {"Journal/Gamma.md": "# Gamma\n\nGamma links [[Beta]].\n"}, "gamma")
    git(clone, "push", "-q", "origin", "main")
    out = _run(bare, tmp_path, "run2")
    assert "from source" in out
    _, manifest = _remote_index(bare)
    now = _branch_files(bare, "kbase-index")
    assert now[shard] != forged and b"poison" not in now[shard]
    assert now[shard] == files[shard]  # what the source gives, as before the forgery
    assert manifest["counts"]["notes"] == 4  # type: ignore[index]


def test_an_invalid_branch_is_replaced_not_an_error_forever(tmp_path: Path) -> None:
    bare, clone = _origin(tmp_path)
    _run(bare, tmp_path, "run1")
    git(clone, "fetch", "-q", "origin", "kbase-index")
    tip = git(clone, "rev-parse", "FETCH_HEAD").strip()
    files = _branch_files(clone, "FETCH_HEAD")
    entries = [("100644", r, d) for r, d in sorted(files.items())]
    entries.append(("120000", "shards/escape", b"../../../../etc/passwd"))  # a link
    _push_tree(clone, tip, entries)
    out = _run(bare, tmp_path, "run2")
    assert "from source" in out
    source, _ = _remote_index(bare)
    assert source == git(clone, "rev-parse", "HEAD").strip()
    assert "shards/escape" not in _branch_files(bare, "kbase-index")


@pytest.mark.parametrize("manifest", [
    # 80 MiB of one JSON string: past the cap, never read.
    b'{"format": "kbase-index", "x": "' + b"a" * (80 << 20) + b'"}',
    b'{"format": "kbase-index", "format_version": "three", "files": 7}',  # bad types
    b"\x00\xff not JSON",
], ids=["80 MiB", "bad types", "not JSON"])
def test_a_broken_manifest_is_replaced(tmp_path: Path, manifest: bytes) -> None:
    bare, clone = _origin(tmp_path)
    _run(bare, tmp_path, "run1")
    git(clone, "fetch", "-q", "origin", "kbase-index")
    tip = git(clone, "rev-parse", "FETCH_HEAD").strip()
    _push_tree(clone, tip, [("100644", "manifest.json", manifest)])
    out = _run(bare, tmp_path, "run2")
    assert "from source" in out
    source, _ = _remote_index(bare)
    assert source == git(clone, "rev-parse", "HEAD").strip()
