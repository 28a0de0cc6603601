"""Finding the published index in any clone: a `--single-branch` clone (what CI checkouts
make) fetches the index branch from a real local bare remote, FETCH_HEAD is accepted when
it holds an index, `--offline` never fetches, and a remote that does not answer costs a
bounded wait."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import GIT_ENV, git, run_kbase, write
from querykit import publish_index, query

FILES: dict[str, str | bytes] = {
    "Alpha.md": "# Alpha\n\nAlpha talks about compost heaps. See [[Beta]].\n",
    "Beta.md": "# Beta\n\nBeta grows tomato seedlings.\n",
}


@pytest.fixture
def remote(make_repo: Callable[..., Path], tmp_path: Path) -> Path:
    """A bare repository holding `main` and a published `kbase-index` branch."""
    src = make_repo(FILES)
    publish_index(src)
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(src), str(bare))
    return bare


def _single(remote: Path, dest: Path) -> Path:
    git(dest.parent, "clone", "-q", "--single-branch", "--branch", "main", str(remote),
        str(dest))
    assert "kbase-index" not in git(dest, "branch", "-a")
    return dest


def _forged_fetch_head(cl: Path, tmp_path: Path) -> str:
    """A commit holding the index FETCH_HEAD names with one blob swapped (`names.json`:
    its manifest now lies)."""
    good = git(cl, "rev-parse", "FETCH_HEAD").strip()
    lines = git(cl, "ls-tree", good).splitlines()
    (tmp_path / "names.json").write_text('{"a":[999999]}\n')
    bad = git(cl, "hash-object", "-w", str(tmp_path / "names.json")).strip()
    lines = [ln if not ln.endswith("\tnames.json") else f"100644 blob {bad}\tnames.json"
             for ln in lines]
    tree = subprocess.run(["git", "mktree"], cwd=cl, env={**os.environ, **GIT_ENV},
                          input="\n".join(lines) + "\n", text=True, check=True,
                          capture_output=True).stdout.strip()
    return git(cl, "commit-tree", tree, "-p", good, "-m", "forged").strip()


def test_single_branch_clone_fetches_the_published_index(remote: Path, tmp_path: Path
                                                         ) -> None:
    cl = _single(remote, tmp_path / "clone")
    code, ans, err = query(cl, "search", "compost", "--mode", "bm25")
    assert code == 0, err
    assert ans["index"]["origin"] == "remote-branch"
    assert "fetched the index branch from origin" in err and "built for this query" not in err
    assert "origin/kbase-index" in git(cl, "branch", "-a")  # fetched once, kept
    code, ans, err = query(cl, "backlinks", "Beta")
    assert code == 0 and ans["index"]["origin"] == "remote-branch" and err == ""


def test_offline_never_fetches(remote: Path, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    cl = _single(remote, tmp_path / "clone")
    code, ans, err = query(cl, "search", "compost", "--mode", "bm25", "--offline")
    assert code == 0 and ans["index"]["origin"] == "temporary"
    assert "git fetch origin +kbase-index:refs/remotes/origin/kbase-index" in err
    monkeypatch.setenv("KBASE_OFFLINE", "1")
    code, ans, _ = query(cl, "status")
    assert ans["source"]["origin"] == "temporary"
    assert "kbase-index" not in git(cl, "branch", "-a")


def test_fetch_head_holding_an_index_is_used(remote: Path, tmp_path: Path) -> None:
    cl = _single(remote, tmp_path / "clone")
    git(cl, "fetch", "-q", "origin", "kbase-index")  # fills only FETCH_HEAD here
    assert "kbase-index" not in git(cl, "branch", "-a")
    code, ans, err = query(cl, "search", "tomato", "--mode", "bm25", "--offline")
    assert code == 0, err
    assert ans["index"]["origin"] == "fetch-head"
    git(cl, "fetch", "-q", "origin", "main")  # FETCH_HEAD now names no index
    code, ans, _ = query(cl, "search", "tomato", "--mode", "bm25", "--offline")
    assert ans["index"]["origin"] == "temporary"


def test_a_remote_without_an_index_is_asked_once_an_hour(make_repo: Callable[..., Path],
                                                        tmp_path: Path) -> None:
    src = make_repo(FILES)
    bare = tmp_path / "plain.git"
    git(tmp_path, "clone", "-q", "--bare", str(src), str(bare))
    cl = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(cl))
    code, ans, _ = query(cl, "search", "compost", "--mode", "bm25")
    assert code == 0 and ans["index"]["origin"] == "temporary"
    from kbase_ci.state.memos import state_store

    before = state_store(cl / ".git" / "kbase").all("remote_miss")
    assert list(before) == ["origin"]
    _, _, err = query(cl, "search", "compost", "--mode", "bm25")
    assert state_store(cl / ".git" / "kbase").all("remote_miss") == before  # not asked again
    # ... and the notice says so, with when it will ask (a branch published meanwhile
    # would otherwise be silently not looked for)
    assert "origin had no kbase-index branch when last asked; kbase asks again after " in err


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def test_a_silent_remote_costs_a_bounded_wait(make_repo: Callable[..., Path],
                                             silent_server: int,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(FILES)
    git(repo, "remote", "add", "origin", f"http://127.0.0.1:{silent_server}/vault.git")
    monkeypatch.setenv("KBASE_FETCH_TIMEOUT", "2")
    t0 = time.monotonic()
    proc = run_kbase("search", "compost", "--mode", "bm25", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    # Bounded: the 2 s fetch limit plus a small in-memory build, with room for a loaded
    # machine; without the limit git waits on the silent remote for ever.
    assert time.monotonic() - t0 < 60
    assert "gave no answer within 2 s" in proc.stderr and "built for this query" in proc.stderr


def test_a_newer_index_in_fetch_head_beats_the_remote_tracking_branch(
        make_repo: Callable[..., Path], tmp_path: Path) -> None:
    src = make_repo(FILES)
    publish_index(src)
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(src), str(bare))
    cl = _single(bare, tmp_path / "clone")
    code, ans, _ = query(cl, "status")  # the auto-fetch makes origin/kbase-index
    assert code == 0 and ans["index"]["origin"] == "remote-branch"
    for name, squash in (("Gamma", ()), ("Delta", ("--squash",))):
        write(src, {f"{name}.md": f"# {name}\n\n{name} prunes the roses. [[Alpha]]\n"})
        git(src, "add", "-A")
        git(src, "commit", "-q", "-m", name)
        for cmd in (("index",), ("publish", *squash)):
            assert run_kbase(*cmd, cwd=src).returncode == 0
        git(src, "push", "-q", "--force", str(bare), "main", "kbase-index")
        git(cl, "pull", "-q")  # FETCH_HEAD names main: not an index, the branch stays
        assert query(cl, "status")[1]["index"]["origin"] == "remote-branch"
        git(cl, "fetch", "-q", "origin", "kbase-index")  # only FETCH_HEAD moves
        code, ans, err = query(cl, "status")
        assert code == 0, err
        # a descendant commit, then (squashed) an orphan built from a later source
        assert ans["index"]["origin"] == "fetch-head", name
        assert ans["index"]["source_commit"] == git(src, "rev-parse", "HEAD").strip()
        assert ans["freshness"] == {"changed": [], "added": [], "deleted": [],
                                    "relinked": []}
        assert ans["source"]["location"].startswith("FETCH_HEAD ")


def test_a_refused_branch_is_still_reported_when_fetch_head_answers(remote: Path,
                                                                   tmp_path: Path) -> None:
    cl = _single(remote, tmp_path / "clone")
    git(cl, "fetch", "-q", "origin", "kbase-index")
    # origin/kbase-index: the same index with one blob swapped (its manifest now lies)
    forged = _forged_fetch_head(cl, tmp_path)
    git(cl, "update-ref", "refs/remotes/origin/kbase-index", forged)
    code, ans, err = query(cl, "search", "tomato", "--mode", "bm25", "--offline")
    assert code == 0, err
    assert ans["index"]["origin"] == "fetch-head"
    assert "origin/kbase-index" in err and "names.json" in err and "refused" in err


def test_one_refused_index_is_named_once(remote: Path, tmp_path: Path) -> None:
    """The remote's index branch itself is forged; the clone meets that index as its
    remote-tracking branch, then as FETCH_HEAD: the notice says why once, not once per
    way the same commit was found."""
    cl = _single(remote, tmp_path / "clone")
    git(cl, "fetch", "-q", "origin", "kbase-index")
    forged = _forged_fetch_head(cl, tmp_path)
    git(cl, "push", "-q", "--force", str(remote), f"{forged}:refs/heads/kbase-index")
    git(cl, "fetch", "-q", "origin", "+kbase-index:refs/remotes/origin/kbase-index")
    git(cl, "fetch", "-q", "origin", "kbase-index")  # FETCH_HEAD: the same commit
    code, ans, err = query(cl, "search", "tomato", "--mode", "bm25", "--offline")
    assert code == 0, err
    assert ans["index"]["origin"] == "temporary"
    assert err.count("names.json") == 1 and "refused" in err, err
