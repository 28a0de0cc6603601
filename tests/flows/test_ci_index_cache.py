"""Issue 40, incremental pushes without trusting the index branch: `kbase ci --index-cache
DIR` builds the index in DIR, starting from the index the job left there on an earlier
push (the action restores DIR from the default branch's Actions cache, which no pull
request can write, and saves it after the run). Only the shards whose notes changed are
built again, and the published index has the bytes of a build from nothing, whatever the
index branch holds."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from tests.ci_support import commit_files, step_outputs
from tests.conftest import git
from tests.flows.test_ci_hostile_branch import _branch_files, _forged, _push_tree
from tests.flows.test_ci_index import _clone, _finish, _origin, _push_env

MORE = {"People/Ada.md": "# Ada\n\nAda wrote [[Alpha]].\n",
        "People/Bob.md": "# Bob\n\nBob reads [[Beta#Usage]] and [[Home]].\n"}


def _push(bare: Path, tmp: Path, name: str, cache: Path) -> tuple[str, dict[str, str]]:
    """One push run of `kbase ci` in a fresh clone (as on a new runner), with the cache."""
    fresh = _clone(bare, tmp / f"clone-{name}")
    env = _push_env(tmp, fresh, name)
    code, out = _finish(_start_with(fresh, env, "--index-cache", str(cache)))
    assert code == 0, out
    return out, step_outputs(env)


def _start_with(clone: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "kbase_ci", "ci", *args], cwd=clone,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _from_nothing(bare: Path, tmp: Path) -> dict[str, bytes]:
    """Every file of `kbase index` run on the remote's main in a new clone."""
    fresh = _clone(bare, tmp / "clone-full")
    out = tmp / "full-index"
    proc = subprocess.run([sys.executable, "-m", "kbase_ci", "index", "--out", str(out)],
                          cwd=fresh, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return {p.relative_to(out).as_posix(): p.read_bytes()
            for p in sorted(out.rglob("*")) if p.is_file()}


def _setup(tmp: Path) -> tuple[Path, Path, Path]:
    bare, clone = _origin(tmp)
    commit_files(clone, MORE, "people")
    git(clone, "push", "-q", "origin", "main")
    return bare, clone, tmp / "runner-temp" / "kbase-index-cache"


def test_a_push_rebuilds_only_the_changed_shard_and_publishes_a_full_builds_bytes(
        tmp_path: Path) -> None:
    bare, clone, cache = _setup(tmp_path)
    out, outputs = _push(bare, tmp_path, "run1", cache)
    assert "(3 shard(s) built)" in out  # a cache miss: from nothing
    assert outputs["index-cache"] == str(cache)
    assert (cache / "manifest.json").is_file()

    commit_files(clone, {"Topics/Alpha.md": "# Alpha\n\nAlpha is about kebab-case now.\n"},
                 "edit alpha")
    git(clone, "push", "-q", "origin", "main")
    out, outputs = _push(bare, tmp_path, "run2", cache)
    assert "1 shard(s) built, 2 unchanged" in out, out
    assert outputs["index-status"] == "committed" and outputs["index-cache"] == str(cache)
    published = _branch_files(bare, "kbase-index")
    assert published == _from_nothing(bare, tmp_path)
    # What the action saves is what was published.
    assert {p.relative_to(cache).as_posix(): p.read_bytes()
            for p in cache.rglob("*") if p.is_file()} == published


def test_the_index_branch_is_not_where_a_push_starts_from(tmp_path: Path) -> None:
    """A forged shard on the branch (hashes recomputed) is never published, also when the
    build starts from the cache: the cache holds what this job built, not the branch."""
    bare, clone, cache = _setup(tmp_path)
    _push(bare, tmp_path, "run1", cache)
    git(clone, "fetch", "-q", "origin", "kbase-index")
    files = _branch_files(clone, "FETCH_HEAD")
    shard = next(r for r in files if r.startswith("shards/") and r.endswith("chunks.json")
                 and "topics" in r)
    _push_tree(clone, git(clone, "rev-parse", "FETCH_HEAD").strip(),
               _forged(files, shard, b'{"counts": [1, 1], "poison": 1}'))
    commit_files(clone, {"People/Cy.md": "# Cy\n\nCy links [[Ada]].\n"}, "cy")
    git(clone, "push", "-q", "origin", "main")
    out, _ = _push(bare, tmp_path, "run2", cache)
    assert "1 shard(s) built, 2 unchanged" in out, out
    published = _branch_files(bare, "kbase-index")
    assert b"poison" not in published[shard]
    assert published == _from_nothing(bare, tmp_path)


def test_a_damaged_cached_shard_is_built_again(tmp_path: Path) -> None:
    bare, clone, cache = _setup(tmp_path)
    _push(bare, tmp_path, "run1", cache)
    damaged = next(p for p in cache.glob("shards/*/chunks.json") if "topics" in p.parent.name)
    damaged.write_bytes(b'{"counts": [9, 9]}')  # its manifest hash no longer matches
    commit_files(clone, {"People/Cy.md": "# Cy\n\nCy links [[Ada]].\n"}, "cy")
    git(clone, "push", "-q", "origin", "main")
    out, _ = _push(bare, tmp_path, "run2", cache)
    assert "2 shard(s) built, 1 unchanged" in out, out  # people (changed) and topics
    assert _branch_files(bare, "kbase-index") == _from_nothing(bare, tmp_path)


def test_a_cache_folder_that_is_not_an_index_is_left_alone(tmp_path: Path) -> None:
    bare, _, cache = _setup(tmp_path)
    cache.mkdir(parents=True)
    (cache / "notes.txt").write_text("someone's file\n", encoding="utf-8")
    out, outputs = _push(bare, tmp_path, "run1", cache)
    assert "::warning title=kbase::" in out and "is not a kbase index" in out
    assert "(3 shard(s) built)" in out and outputs["index-status"] == "created"
    assert "index-cache" not in outputs  # nothing for the action to save
    assert sorted(p.name for p in cache.iterdir()) == ["notes.txt"]
    digest = hashlib.sha256((cache / "notes.txt").read_bytes()).hexdigest()
    assert digest == hashlib.sha256(b"someone's file\n").hexdigest()
