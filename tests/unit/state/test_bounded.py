"""The one bounded reader (kbase_ci.state.bounded, issue 38): a regular file only, no
link out of its tree, a size cap checked before and while reading, a decoding budget,
and MemoryError / RecursionError turned into the same located refusal (exit 2)."""

from __future__ import annotations

import json
import os
import pickle
import threading
from pathlib import Path

import pytest

from kbase_ci.cli.main import exit_code_for
from kbase_ci.errors import InputRefused
from kbase_ci.state.bounded import (
    NotRegular,
    check_input,
    decode_json,
    decoding,
    input_blocks,
    is_input,
    load_json_file,
    read_input,
)


def test_a_fifo_or_a_device_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    done: list[str] = []

    def read_both() -> None:
        for name in ("fifo", "zero"):
            with pytest.raises(NotRegular, match="not a regular file"):
                read_input(tmp_path / name, 1 << 20)
            done.append(name)

    worker = threading.Thread(target=read_both, daemon=True)
    worker.start()
    worker.join(30)  # a blocked open of the FIFO would never return
    assert done == ["fifo", "zero"]
    assert not is_input(tmp_path / "zero")


def test_a_link_out_of_its_tree_is_refused_one_inside_is_read(tmp_path: Path) -> None:
    tree, outside = tmp_path / "tree", tmp_path / "secret"
    (tree / "sub").mkdir(parents=True)
    outside.write_bytes(b"key")
    (tree / "sub" / "in.json").write_bytes(b"{}")
    (tree / "out").symlink_to(outside)
    (tree / "in").symlink_to("sub/in.json")
    (tree / "up").symlink_to("../secret")
    assert read_input(tree / "in", 10, within=tree) == b"{}"
    for name in ("out", "up"):
        with pytest.raises(InputRefused, match=f"a symbolic link out of {tree}"):
            read_input(tree / name, 10, within=tree)
    assert read_input(tree / "out", 10) == b"key"  # without a tree: the user's path
    with pytest.raises(OSError):  # not followed at all
        read_input(tree / "in", 10, follow_links=False)


def test_the_cap_holds_before_and_while_reading(tmp_path: Path) -> None:
    big = tmp_path / "big"
    with big.open("wb") as fh:
        fh.truncate(1 << 30)  # sparse
    with pytest.raises(InputRefused, match="1073741824 bytes, more than the 1024"):
        read_input(big, 1024)
    with pytest.raises(InputRefused, match="more than the 1024"):
        check_input(big, 1024)
    with pytest.raises(InputRefused, match="more than the 1024"):
        list(input_blocks(big, 1024))
    # /proc files say they are empty and are not: the cap holds while reading
    status = Path("/proc/self/status")
    if status.is_file():
        assert os.stat(status).st_size == 0
        with pytest.raises(InputRefused, match="more than the 16 bytes"):
            read_input(status, 16)
    exact = tmp_path / "exact"
    exact.write_bytes(b"x" * 1024)
    assert read_input(exact, 1024) == b"x" * 1024
    assert b"".join(input_blocks(exact, 1024)) == b"x" * 1024


def test_decoding_has_a_budget_and_maps_memory_and_recursion(tmp_path: Path) -> None:
    lists = b"[" + b"[]," * 100_000 + b"[]]"
    assert len(decode_json(lists, "a.json")) == 100_001
    with pytest.raises(InputRefused, match=r"a\.json: would take about 12 MiB to decode, "
                                           r"more than the 1 MiB"):
        decode_json(lists, "a.json", budget=1 << 20)
    with pytest.raises(InputRefused, match=r"a\.json: nested too deeply to decode"):
        decode_json(b"[" * 200_000 + b"]" * 200_000, "a.json")
    with pytest.raises(InputRefused, match=r"b\.yml: too large to decode in memory"), \
            decoding("b.yml"):
        raise MemoryError
    with pytest.raises(InputRefused) as got:
        decode_json(b'{"a": 1,\n "b": }', "c.json")
    assert str(got.value).startswith("c.json:2:7: not JSON: Expecting value")
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"x": [1, 2]}))
    assert load_json_file(path, 100) == {"x": [1, 2]}


def test_a_refusal_is_exit_2_an_oserror_and_survives_a_worker_process() -> None:
    exc = InputRefused("m/config.json", "not read", 3, 4)
    assert exit_code_for(exc) == 2 and isinstance(exc, OSError)
    again = pickle.loads(pickle.dumps(NotRegular("x", "not a regular file")))
    assert type(again) is NotRegular and str(again) == "x: not a regular file"
    assert str(pickle.loads(pickle.dumps(exc))) == "m/config.json:3:4: not read"
