"""Issue 40: a command run with the collector off paid for one cyclic collection of all
it had allocated when the collector came back on (10% of a cold `check --all` on a
6.6k-note vault). Its survivors are frozen on the way out instead, and given back to the
collector by the next command in the same process."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import run_kbase

from kbase_ci.collector import collector_off


def test_turning_the_collector_back_on_walks_nothing() -> None:
    collections: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(seen)
    try:
        with collector_off():
            assert not gc.isenabled()
            kept = [[i] for i in range(50_000)]  # far past the 700 of a young generation
        assert gc.isenabled()
        more = [[i] for i in range(100)]  # the allocations that set off a collection
    finally:
        gc.callbacks.remove(seen)
    assert collections == []
    assert gc.is_tracked(kept[0]) and gc.get_freeze_count() >= len(kept)
    del more

    # The next command gives them back: a process running many commands collects them.
    with collector_off():
        assert gc.get_freeze_count() == 0
    gc.unfreeze()  # this test's own objects: not left frozen for the rest of the suite


def test_objects_frozen_by_someone_else_stay_theirs() -> None:
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with collector_off():
            pass
        assert gc.get_freeze_count() == before
        with collector_off():
            pass
        assert gc.get_freeze_count() == before  # not unfrozen by us either
    finally:
        gc.unfreeze()


class _Node:
    link: object = None


def test_a_block_that_is_not_the_process_last_leaves_its_cycles_collectable() -> None:
    """A caller running commands in one process (the tests' in-process CLI): frozen,
    the cycles each command left (an SQLite connection in one is an open file) were
    never collected, and a test worker ran out of file descriptors."""
    import weakref

    with collector_off(last=False):
        node = _Node()
        node.link = node
        ref = weakref.ref(node)
        del node
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert ref() is None


def test_the_cli_called_with_arguments_freezes_nothing(
        make_repo: Callable[..., Path]) -> None:
    root = make_repo({"a.md": "# A\n\n[[b]]\n", "b.md": "# B\n"})
    assert gc.get_freeze_count() == 0
    proc = run_kbase("check", "--all", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert gc.get_freeze_count() == 0
