"""The local-state package (kbase_ci.state), in process: atomic writes and swaps, temp
folders git never sees, locks, folder generations read the same with and without
/proc, the state store's memos, the hub cache, BLAS threads."""

from __future__ import annotations

import os
import sqlite3
import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git

from kbase_ci.errors import ChangedError, UsageError
from kbase_ci.state import memos
from kbase_ci.state.database import open_database
from kbase_ci.state.files import create_new, exchange, replace, write_atomic
from kbase_ci.state.folders import (
    GIT_HIDE,
    SCRATCH_PREFIX,
    TEMP_MARK,
    Scratch,
    is_our_temp,
    make_temp_dir,
)
from kbase_ci.state.generations import Pinned, discard, in_use
from kbase_ci.state.hubcache import KIND_FILES, cached, repo_dir
from kbase_ci.state.locks import exclusive
from kbase_ci.state.memos import StateStore, state_store

# -- files ---------------------------------------------------------------------------


def test_write_atomic_replaces_whole_and_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"old")
    path.chmod(0o600)
    write_atomic(path, b"new")
    assert path.read_bytes() == b"new" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md"]  # no temp file left


def test_write_atomic_with_expect_refuses_a_changed_file(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"edited by someone else")
    with pytest.raises(ChangedError, match="changed since kbase read it"):
        write_atomic(path, b"new", expect=b"what kbase read")
    assert path.read_bytes() == b"edited by someone else"
    write_atomic(path, b"new", expect=b"edited by someone else")
    assert path.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md"]


def test_create_new_never_overwrites_not_even_through_a_dangling_link(tmp_path: Path
                                                                      ) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(FileExistsError):
        create_new(tmp_path / "link", b"x")
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_exchange_swaps_two_folders(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_text("A")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "f").write_text("B")
    assert exchange(tmp_path / "a", tmp_path / "b")
    assert (tmp_path / "a" / "f").read_text() == "B" and (tmp_path / "b" / "f").read_text() == "A"


# -- folders -------------------------------------------------------------------------


def test_a_temp_folder_is_hidden_from_git_and_marked(make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "# A\n"})
    tmp = make_temp_dir(root / ".kbase.tmp-1")
    (tmp / "manifest.json").write_text("{}")
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    assert (tmp / GIT_HIDE).read_text() == "*\n" and is_our_temp(tmp)
    # a committed look-alike (its marker cannot hold its own inode) is not ours
    fake = root / ".kbase.tmp-2"
    fake.mkdir()
    (fake / TEMP_MARK).write_text("12345\n")
    assert not is_our_temp(fake)


def test_scratch_folders_of_dead_processes_are_swept(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = make_temp_dir(tmp_path / f"{SCRATCH_PREFIX}999999999-abc")
    look_alike = tmp_path / f"{SCRATCH_PREFIX}999999998-abc"
    look_alike.mkdir()
    scratch = Scratch()
    assert scratch.path.is_dir() and not dead.exists() and look_alike.exists()
    scratch.cleanup()
    assert not scratch.path.exists()


# -- locks ---------------------------------------------------------------------------


def test_an_exclusive_lock_has_one_holder(tmp_path: Path) -> None:
    lock = tmp_path / "locks" / "a.lock"
    with exclusive(lock):
        held = threading.Event()
        result: list[str] = []

        def other() -> None:
            try:
                with exclusive(lock, timeout=0.2, what="the other"):
                    result.append("got it")
            except UsageError as exc:
                result.append(str(exc))
            held.set()

        threading.Thread(target=other).start()
        held.wait(10)
        assert result and "the other: another kbase process held the lock" in result[0]
    with exclusive(lock, timeout=0):  # released
        pass
    assert lock.exists()  # the file stays: deleting it would race with a waiter


# -- generations ---------------------------------------------------------------------


def _generation(parent: Path, name: str, text: str) -> Path:
    folder = parent / name
    (folder / "sub").mkdir(parents=True)
    (folder / "manifest.json").write_text(text)
    (folder / "sub" / "data").write_text(text)
    return folder


def _swap_in(parent: Path, new: Path) -> Path:
    """What a writer does: the old generation aside, the new one in its place."""
    aside = parent / "idx.old"
    replace(parent / "idx", aside)
    replace(new, parent / "idx")
    return aside


VIAS = ["proc", "dirfd", "name"] if Path("/proc/self/fd").is_dir() else ["dirfd", "name"]


@pytest.mark.parametrize("via", VIAS)
def test_a_pinned_generation_is_read_whole_or_refused(tmp_path: Path, via: str) -> None:
    _generation(tmp_path, "idx", "one")
    pin = Pinned(tmp_path / "idx", "manifest.json", via=via)  # type: ignore[arg-type]
    with pin.open("sub/data") as fh:
        assert fh.read() == b"one"
    pin.confirm()
    _swap_in(tmp_path, _generation(tmp_path, "new", "two"))
    if via == "name":  # no handle on the folder: a read after the swap is refused
        with pytest.raises(ChangedError, match="replaced by a newer build"):
            pin.open("sub/data")
    else:  # the generation opened is still what is read, after the swap too
        with pin.open("sub/data") as fh:
            assert fh.read() == b"one"
    if via == "proc":
        assert (pin.path / "sub" / "data").read_text() == "one"
        pin.confirm()
    else:
        with pytest.raises(ChangedError):
            pin.confirm()  # a path handed to a library named the new generation
    pin.close()


def test_discard_keeps_a_generation_a_reader_holds(tmp_path: Path) -> None:
    old = _generation(tmp_path, "idx", "one")
    pin = Pinned(old, "manifest.json")
    assert in_use(old, "manifest.json")
    discard(old, "manifest.json", tmp_path / "retired")
    assert (tmp_path / "retired" / "sub" / "data").read_text() == "one"
    pin.close()
    assert not in_use(tmp_path / "retired", "manifest.json")
    discard(tmp_path / "retired", "manifest.json", tmp_path / "again")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# -- the state store -----------------------------------------------------------------


def test_memos_are_kept_and_read_back(tmp_path: Path) -> None:
    store = StateStore(tmp_path)
    store.put("config", "k", '{"a": 1}')
    store.put_many("yaml", [("d1", "[1]"), ("d2", "[2]")])
    fresh = StateStore(tmp_path)  # another process, say
    assert fresh.get("config", "k") == '{"a": 1}' and fresh.get("config", "x") is None
    assert fresh.get_many("yaml", ["d1", "d3", "d2"]) == {"d1": "[1]", "d2": "[2]"}
    assert fresh.all("fix") == {}
    assert sorted(r[0] for r in sqlite3.connect(tmp_path / memos.STORE_FILE).execute(
        "SELECT name FROM sqlite_master WHERE type='table'")) == sorted(
        ["meta", *memos.KEEP])


def test_a_memo_keeps_its_most_recent_rows(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(memos.KEEP, "validated", 3)
    store = StateStore(tmp_path)
    for i in range(5):
        store.put("validated", f"d{i}", "")
    assert sorted(store.all("validated")) == ["d2", "d3", "d4"]


def test_a_store_that_cannot_be_written_remembers_nothing_and_fails_nothing(
        tmp_path: Path) -> None:
    (tmp_path / "file").write_text("a file where the folder should be")
    store = StateStore(tmp_path / "file" / "kbase")
    store.put("config", "k", "v")
    assert store.get("config", "k") is None and store.all("yaml") == {}


def test_a_corrupt_store_is_set_aside_and_made_again(tmp_path: Path) -> None:
    (tmp_path / memos.STORE_FILE).write_bytes(b"not a database" * 100)
    store = StateStore(tmp_path)
    store.put("fix", "root", "{}")
    assert store.get("fix", "root") == "{}"
    assert (tmp_path / f"{memos.STORE_FILE}.corrupt").is_file()


def test_the_store_of_a_folder_is_opened_again_when_its_file_goes(tmp_path: Path) -> None:
    first = state_store(tmp_path)
    first.put("config", "k", "v")
    assert state_store(tmp_path) is first
    os.unlink(tmp_path / memos.STORE_FILE)
    again = state_store(tmp_path)
    assert again is not first and again.get("config", "k") is None


def test_a_process_visiting_many_repositories_keeps_few_stores_open(tmp_path: Path) -> None:
    """A test run or a library user opens stores of hundreds of git dirs; each open one
    holds three descriptors, so the least recently used are closed (a process ran out of
    descriptors at ~330 repositories), and one used again still works."""
    def open_fds() -> int:
        return len(os.listdir(f"/proc/{os.getpid()}/fd"))

    first = state_store(tmp_path / "r0")
    first.put("config", "k", "v0")
    before = open_fds()
    for i in range(1, 40):
        state_store(tmp_path / f"r{i}").put("config", "k", f"v{i}")
    assert open_fds() - before <= 3 * 8
    assert first.get("config", "k") == "v0"  # closed meanwhile: opens its file again
    assert state_store(tmp_path / "r0").get("config", "k") == "v0"


def test_a_database_of_another_layout_is_made_again(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    db = open_database(path, "1", {"t": "CREATE TABLE IF NOT EXISTS t (a TEXT)"})
    assert db is not None
    db.execute("INSERT INTO t VALUES ('row')")
    db.close()
    db = open_database(path, "2", {"t": "CREATE TABLE IF NOT EXISTS t (a TEXT)"})
    assert db is not None and db.execute("SELECT count(*) FROM t").fetchone() == (0,)
    db.close()


# -- the hub cache, BLAS threads -----------------------------------------------------


def test_the_hub_cache_counts_only_complete_snapshots(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    snaps = repo_dir("acme/m") / "snapshots"
    need = KIND_FILES["model2vec"][0]
    for name in need[:-1]:  # one required file missing: an interrupted download
        (snaps / "a" / name).parent.mkdir(parents=True, exist_ok=True)
        (snaps / "a" / name).write_text("x")
    assert cached("acme/m", "model2vec") is None
    (snaps / "a" / need[-1]).write_text("x")
    assert cached("acme/m", "model2vec") == snaps / "a"
    assert cached("acme/m", "onnx") is None and cached("acme/m", None) == snaps / "a"


def test_blas_is_held_to_one_thread_for_a_block() -> None:
    pytest.importorskip("numpy")
    from threadpoolctl import threadpool_info, threadpool_limits

    from kbase_ci.state.threads import blas_single_threaded

    def threads() -> list[int]:
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    if not threads():
        pytest.skip("numpy loaded no BLAS library that threadpoolctl knows")
    with threadpool_limits(2, user_api="blas"):
        assert set(threads()) == {2}
        with blas_single_threaded():
            assert set(threads()) == {1}
        assert set(threads()) == {2}
