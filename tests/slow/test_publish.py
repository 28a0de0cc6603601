"""`kbase publish`: real repositories, a real bare remote, the real `kbase index` build.

Races are staged with git's own hooks in the losing clone, not with mocks:
- a reference-transaction hook fires when the clone's fetch records the tip it saw, and
  makes the other publisher push first: the lease is then stale on the client side;
- a pre-push hook fires after git has checked the lease against the advertised tip, and
  makes the other publisher push first: the remote rejects the update server-side.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, git, write

NOTES_V0 = {
    ".gitignore": ".kbase/\n",
    "Index.md": "# Index\n\nSee [[Alpha]] and [[Beta#Usage]].\n",
    "Alpha.md": "---\ntags: [topic]\n---\n# Alpha\n\nAlpha talks about `snake_case` names.\n",
    "Beta.md": "# Beta\n\n## Usage\n\nUse beta with [[Alpha]].\n",
}
CHANGES = [  # one commit each: C1, C2 on top of C0 = NOTES_V0
    {"Gamma.md": "# Gamma\n\nGamma links to [[Beta]].\n"},
    {"Alpha.md": "# Alpha\n\nAlpha, rewritten: camelCase and contextlib.contextmanager.\n"},
]


def _env(**extra: str) -> dict[str, str]:
    """No GIT_AUTHOR_* or GIT_COMMITTER_*: publish must use its own fixed identity."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return {**env, "PYTHONPATH": str(REPO), "GIT_CONFIG_NOSYSTEM": "1", **extra}


def kbase(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kbase_ci", *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=300, check=False)


def build(clone: Path) -> None:
    proc = kbase(clone, "index")
    assert proc.returncode == 0, proc.stderr


def publish(clone: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    proc = kbase(clone, "publish", "--json", *args)
    data = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, data, proc.stderr


def tip(repo: Path, ref: str = "refs/heads/kbase-index") -> str | None:
    out = git(repo, "rev-parse", "--verify", "-q", ref, check=False).strip()
    return out or None


def branch_files(repo: Path, ref: str) -> dict[str, bytes]:
    names = git(repo, "ls-tree", "-r", "--name-only", "-z", ref).split("\0")
    out = {}
    for name in filter(None, names):
        proc = subprocess.run(["git", "cat-file", "blob", f"{ref}:{name}"], cwd=repo,
                              capture_output=True, check=True)
        out[name] = proc.stdout
    return out


def verified_manifest(repo: Path, ref: str) -> dict[str, Any]:
    """The branch's manifest, after checking it lists exactly the files and their sha256."""
    files = branch_files(repo, ref)
    manifest = json.loads(files.pop("manifest.json"))
    assert manifest["format"] == "kbase-index"
    listed = manifest["files"]
    assert set(listed) == set(files)
    for name, data in files.items():
        assert hashlib.sha256(data).hexdigest() == listed[name], name
    return dict(manifest)


def source(repo: Path, ref: str) -> str:
    return str(verified_manifest(repo, ref)["source"]["commit"])


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    return subprocess.run(["git", "merge-base", "--is-ancestor", a, b], cwd=repo,
                          check=False).returncode == 0


def snapshot(repo: Path) -> tuple[str, str, str, str, str]:
    """HEAD, its branch, the git index bytes, status, and the work tree (minus .kbase/)."""
    tree = hashlib.sha256()
    for p in sorted(repo.rglob("*")):
        rel = p.relative_to(repo).as_posix()
        if p.is_file() and not rel.startswith((".git/", ".kbase/")):
            tree.update(rel.encode() + b"\0" + p.read_bytes())
    index = hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest()
    return (git(repo, "rev-parse", "HEAD"), git(repo, "symbolic-ref", "HEAD"), index,
            git(repo, "status", "--porcelain", "--untracked-files=all"), tree.hexdigest())


# -- local publishing --------------------------------------------------------------------

@pytest.fixture
def vault(make_repo: Any) -> Path:
    root: Path = make_repo(NOTES_V0)
    build(root)
    return root


def commit_change(repo: Path, files: dict[str, str | bytes], msg: str = "change") -> str:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", msg)
    return git(repo, "rev-parse", "HEAD").strip()


def test_first_publish_creates_branch_without_touching_work_tree(vault: Path) -> None:
    before = snapshot(vault)
    code, res, err = publish(vault)
    assert code == 0, err
    assert res["status"] == "created" and res["ok"] and not res["pushed"]
    assert snapshot(vault) == before
    head = git(vault, "rev-parse", "HEAD").strip()
    assert tip(vault) == res["commit"]
    assert source(vault, "kbase-index") == head == res["source_commit"]
    local = {p.relative_to(vault / ".kbase").as_posix(): p.read_bytes()
             for p in (vault / ".kbase").rglob("*") if p.is_file()}
    assert branch_files(vault, "kbase-index") == local
    meta = git(vault, "show", "-s", "--format=%an <%ae>|%cn <%ce>|%aI|%P", "kbase-index")
    ident = "kbase-ci <kbase-ci@users.noreply.github.com>"
    author, committer, date, parents = meta.strip().split("|")
    assert author == committer == ident and parents == ""
    built = json.loads((vault / ".kbase" / "manifest.json").read_text())["built_at"]
    from datetime import datetime
    assert datetime.fromisoformat(date) == datetime.fromisoformat(built.replace("Z", "+00:00"))
    trailer = git(vault, "show", "-s", "--format=%(trailers:key=Kbase-Source-Commit,valueonly)",
                  "kbase-index").strip()
    assert trailer == head


def test_republish_of_same_build_commits_nothing(vault: Path) -> None:
    assert publish(vault)[0] == 0
    first = tip(vault)
    code, res, _ = publish(vault)
    assert code == 0 and res["status"] == "unchanged" and res["commit"] == first
    assert tip(vault) == first
    assert git(vault, "rev-list", "--count", "kbase-index").strip() == "1"


def test_a_change_adds_one_commit_on_top(vault: Path) -> None:
    assert publish(vault)[0] == 0
    first = tip(vault)
    head = commit_change(vault, CHANGES[0])
    build(vault)
    code, res, _ = publish(vault)
    assert code == 0 and res["status"] == "committed" and res["previous"] == first
    assert git(vault, "rev-parse", "kbase-index^").strip() == first
    assert git(vault, "rev-list", "--count", "kbase-index").strip() == "2"
    assert source(vault, "kbase-index") == head


def test_squash_keeps_one_orphan_commit(vault: Path) -> None:
    assert publish(vault, "--squash")[0] == 0
    commit_change(vault, CHANGES[0])
    build(vault)
    code, res, _ = publish(vault, "--squash")
    assert code == 0 and res["status"] == "committed"
    assert git(vault, "rev-list", "--count", "kbase-index").strip() == "1"
    assert source(vault, "kbase-index") == git(vault, "rev-parse", "HEAD").strip()


def test_same_build_gives_same_commit_id_in_another_clone(vault: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(vault), str(other))
    build(other)
    assert publish(vault)[0] == 0
    assert publish(other)[0] == 0
    assert tip(vault) == tip(other)


# -- refusals ---------------------------------------------------------------------------

def test_refuses_branch_that_is_not_an_index(vault: Path) -> None:
    git(vault, "branch", "kbase-index", "main")
    foreign = tip(vault)
    code, _, err = publish(vault)
    assert code == 2 and "does not hold a kbase index" in err
    assert tip(vault) == foreign
    code, res, err = publish(vault, "--force")
    assert code == 0, err
    assert res["status"] == "committed"
    assert git(vault, "rev-list", "--count", "kbase-index").strip() == "1"  # orphan
    verified_manifest(vault, "kbase-index")


def test_refuses_branch_with_newer_format(vault: Path) -> None:
    assert publish(vault)[0] == 0
    # Rewrite the published manifest with a future format version, with plumbing.
    files = branch_files(vault, "kbase-index")
    manifest = json.loads(files["manifest.json"])
    manifest["format_version"] += 1
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=vault, check=True,
                          input=json.dumps(manifest).encode(), capture_output=True)
    listing = git(vault, "ls-tree", "kbase-index")
    listing = "\n".join(
        ln if not ln.endswith("\tmanifest.json")
        else f"100644 blob {blob.stdout.decode().strip()}\tmanifest.json"
        for ln in listing.splitlines()) + "\n"
    tree = subprocess.run(["git", "mktree"], cwd=vault, input=listing.encode(), check=True,
                          capture_output=True).stdout.decode().strip()
    future = git(vault, "commit-tree", tree, "-p", "kbase-index", "-m", "future").strip()
    git(vault, "update-ref", "refs/heads/kbase-index", future)
    commit_change(vault, CHANGES[0])
    build(vault)
    code, _, err = publish(vault)
    assert code == 2 and "newer than this build" in err
    assert tip(vault) == future


def test_refuses_tampered_index(vault: Path) -> None:
    manifest = json.loads((vault / ".kbase" / "manifest.json").read_text())
    victim = vault / ".kbase" / sorted(manifest["files"])[0]
    victim.write_bytes(victim.read_bytes() + b"tampered")
    code, _, err = publish(vault)
    assert code == 2 and "does not match the manifest" in err
    assert tip(vault) is None


def test_refuses_missing_index(make_repo: Any) -> None:
    root = make_repo(NOTES_V0)
    code, _, err = publish(root)
    assert code == 2 and "no index here" in err


def test_refuses_dirty_build_unless_allowed(vault: Path) -> None:
    write(vault, {"Beta.md": "# Beta\n\nUncommitted edit.\n"})
    build(vault)
    code, _, err = publish(vault)
    assert code == 2 and "dirty work tree" in err and tip(vault) is None
    code, res, err = publish(vault, "--allow-dirty")
    assert code == 0 and res["status"] == "created", err
    body = git(vault, "show", "-s", "--format=%B", "kbase-index")
    assert "Kbase-Source-Dirty: true" in body


def test_refuses_checked_out_branch(vault: Path) -> None:
    code, _, err = publish(vault, "--branch", "main")
    assert code == 2 and "checked out" in err


# -- pushing ----------------------------------------------------------------------------

@dataclass
class Race:
    remote: Path
    clones: list[Path]
    """clones[i] was cloned when main was at commits[i], and has built its index."""
    commits: list[str]


def _clone(remote: Path, dest: Path) -> Path:
    git(remote.parent, "clone", "-q", str(remote), str(dest))
    git(dest, "config", "user.name", "Test")
    git(dest, "config", "user.email", "test@example.com")
    return dest


@pytest.fixture
def race(tmp_path: Path, make_repo: Any) -> Race:
    """A bare remote whose main has C0 < C1 < C2, and one clone per commit, each
    cloned before the next commit existed (so older clones do not know newer commits)."""
    work = make_repo(NOTES_V0, name="work")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(work, "remote", "add", "origin", str(remote))
    commits, clones = [], []
    for i in range(3):
        if i:
            commit_change(work, CHANGES[i - 1], f"c{i}")
        git(work, "push", "-q", "origin", "main")
        commits.append(git(work, "rev-parse", "HEAD").strip())
        clones.append(_clone(remote, tmp_path / f"clone{i}"))
    for clone in clones:
        build(clone)
    return Race(remote, clones, commits)


def test_push_creates_then_keeps_remote_branch(race: Race) -> None:
    c0 = race.clones[0]
    before = snapshot(c0)
    code, res, err = publish(c0, "--push")
    assert code == 0, err
    assert res["status"] == "created" and res["pushed"]
    assert tip(race.remote) == res["commit"] == tip(c0)
    assert source(race.remote, "kbase-index") == race.commits[0]
    assert snapshot(c0) == before
    code, res, _ = publish(c0, "--push")
    assert code == 0 and res["status"] == "unchanged" and not res["pushed"]


def test_squash_push_replaces_the_remote_commit(race: Race) -> None:
    assert publish(race.clones[0], "--push", "--squash")[0] == 0
    first = tip(race.remote)
    code, res, err = publish(race.clones[1], "--push", "--squash")
    assert code == 0, err
    assert res["pushed"] and res["previous"] == first
    assert git(race.remote, "rev-list", "--count", "kbase-index").strip() == "1"
    assert source(race.remote, "kbase-index") == race.commits[1]


def test_newer_remote_index_is_not_overwritten(race: Race) -> None:
    assert publish(race.clones[2], "--push")[0] == 0
    newest = tip(race.remote)
    code, res, _ = publish(race.clones[1], "--push")
    assert code == 0 and res["status"] == "superseded" and not res["pushed"]
    assert res["newer_source"] == race.commits[2]
    assert tip(race.remote) == newest


def test_push_refused_by_remote_is_not_success(race: Race) -> None:
    hook = race.remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'index branch is protected' >&2\nexit 1\n")
    hook.chmod(0o755)
    code, res, err = publish(race.clones[0], "--push")
    assert code == 2 and "refused" in err and res == {}
    assert tip(race.remote) is None


_HOOK = """#!{python}
import os, subprocess, sys
from pathlib import Path
marker = Path({marker!r})
stdin = sys.stdin.read()
if {trigger} and not marker.exists():
    marker.touch()
    env = {{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}}
    out = subprocess.run([sys.executable, "-m", "kbase_ci", "publish", "--push", "--json"],
                         cwd={other!r}, env=env, capture_output=True, text=True)
    Path({result!r}).write_text(out.stdout)
"""
# How git words each kind of lost lease.
_REJECTION = {"reference-transaction": "stale info", "pre-push": "remote rejected"}
_TRIGGERS = {
    # After the fetch that shows the publisher the current tip: stale lease, client side.
    "reference-transaction": 'sys.argv[1] == "committed" and '
                             '"refs/remotes/origin/kbase-index" in stdin',
    # After git checked the lease against the advertisement: rejected by the remote.
    "pre-push": "True",
}


def stage_race(race: Race, loser: Path, winner: Path, hook: str) -> Path:
    """Make `winner` publish while `loser` is between seeing the tip and pushing."""
    result = loser.parent / f"{winner.name}-result.json"
    # The reference-transaction trigger needs the fetch to record a new tip (and the hook
    # must not exist yet, or this deletion would fire it).
    git(loser, "update-ref", "-d", "refs/remotes/origin/kbase-index", check=False)
    (loser / ".git" / "hooks" / hook).write_text(_HOOK.format(
        python=sys.executable, marker=str(loser.parent / f"{loser.name}-{hook}.done"),
        trigger=_TRIGGERS[hook], other=str(winner), result=str(result)))
    (loser / ".git" / "hooks" / hook).chmod(0o755)
    return result


@pytest.mark.parametrize("hook", ["reference-transaction", "pre-push"])
def test_race_older_publisher_loses_to_newer_and_says_so(race: Race, hook: str) -> None:
    assert publish(race.clones[0], "--push")[0] == 0
    t = tip(race.remote)
    older, newer = race.clones[1], race.clones[2]
    result_file = stage_race(race, older, newer, hook)
    code, res, err = publish(older, "--push")
    winner = json.loads(result_file.read_text())
    assert winner["pushed"] and winner["previous"] == t
    assert code == 0, err
    assert res["status"] == "superseded" and not res["pushed"] and res["attempts"] == 1
    assert res["newer_source"] == race.commits[2]
    assert len(res["rejections"]) == 1 and _REJECTION[hook] in res["rejections"][0]
    assert tip(race.remote) == winner["commit"] == tip(older)
    assert source(race.remote, "kbase-index") == race.commits[2]


@pytest.mark.parametrize("hook", ["reference-transaction", "pre-push"])
def test_race_newer_publisher_rebuilds_and_retries(race: Race, hook: str) -> None:
    assert publish(race.clones[0], "--push")[0] == 0
    older, newer = race.clones[1], race.clones[2]
    # The source moves on after the build: the retry must rebuild from it, not resend .kbase.
    current = commit_change(newer, {"Delta.md": "# Delta\n\nWritten after the build.\n"})
    result_file = stage_race(race, newer, older, hook)
    code, res, err = publish(newer, "--push")
    loser = json.loads(result_file.read_text())
    assert loser["pushed"]  # the older one got in first, and its write was not lost:
    assert code == 0, err
    assert res["status"] == "committed" and res["pushed"] and res["attempts"] == 2
    assert len(res["rejections"]) == 1 and _REJECTION[hook] in res["rejections"][0]
    final = tip(race.remote)
    assert final == res["commit"] and res["previous"] == loser["commit"]
    assert git(race.remote, "rev-parse", "kbase-index^").strip() == loser["commit"]
    assert source(race.remote, "kbase-index") == current == res["source_commit"]
    assert any(b"Delta.md" in data for data in branch_files(race.remote, "kbase-index").values())


def test_race_gives_up_after_max_retries(race: Race) -> None:
    assert publish(race.clones[0], "--push")[0] == 0
    older, newer = race.clones[1], race.clones[2]
    result_file = stage_race(race, newer, older, "pre-push")
    code, res, err = publish(newer, "--push", "--max-retries", "0")
    assert json.loads(result_file.read_text())["pushed"]
    assert code == 1 and "gave up" in err
    assert res["status"] == "gave-up" and not res["ok"] and not res["pushed"]
    assert source(race.remote, "kbase-index") == race.commits[1]


def test_concurrent_publishers_end_with_newest_index(race: Race) -> None:
    older, newer = race.clones[1], race.clones[2]
    for round_ in range(3):
        git(race.remote, "update-ref", "-d", "refs/heads/kbase-index", check=False)
        for clone in (*race.clones[:1], older, newer):
            git(clone, "update-ref", "-d", "refs/heads/kbase-index", check=False)
        assert publish(race.clones[0], "--push")[0] == 0
        order = (older, newer) if round_ % 2 == 0 else (newer, older)
        procs = {c: subprocess.Popen(
            [sys.executable, "-m", "kbase_ci", "publish", "--push", "--json"], cwd=c,
            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for c in order}
        outs = {c: p.communicate(timeout=300) for c, p in procs.items()}
        final = tip(race.remote)
        assert final is not None
        assert source(race.remote, "kbase-index") == race.commits[2]
        for clone, (out, err) in outs.items():
            assert procs[clone].returncode == 0, err
            res = json.loads(out)
            if res["pushed"]:  # a reported write must survive in the branch's history
                assert is_ancestor(race.remote, res["commit"], final)
            else:
                assert clone is older and res["status"] == "superseded"
                assert res["newer_source"] == race.commits[2]
        assert json.loads(outs[newer][0])["pushed"]


def test_files_outside_the_manifest_are_not_published(vault: Path) -> None:
    (vault / ".kbase" / "stray.tmp").write_text("left over\n")
    code, res, err = publish(vault)
    assert code == 0 and res["ignored"] == ["stray.tmp"] and "stray.tmp" in err
    assert "stray.tmp" not in branch_files(vault, "kbase-index")
    verified_manifest(vault, "kbase-index")


@pytest.mark.parametrize("value", ["--upload-pack=touch pwned", "main", "HEAD~1", "abc123"])
def test_source_commit_from_a_branch_must_be_an_object_id(vault: Path, value: str) -> None:
    from kbase_ci.index.publish import source_of

    head = git(vault, "rev-parse", "HEAD").strip()
    assert source_of(vault, head, head) == head
    assert source_of(vault, head, value) is None
