"""The one bounded reader: every read of bytes kbase did not write (a note, `.kbase.yml`,
a model folder, an index folder or branch, a CI artifact) and every decoding of them.

Reading (`read_input`, `read_open`, `input_blocks`, `check_input`):
- a regular file only: a FIFO, socket or device is refused without blocking (opened with
  `O_NONBLOCK`, then `fstat`; issue 28: a FIFO where a note was hung `kbase fix`;
  issue 38: `config.json -> /dev/zero` in a committed model folder made `kbase status`
  read for ever);
- with `within`, no symbolic link leading out of that folder (a committed model folder
  is the repository's: its files may not name `~/.ssh` or `/proc`); with
  `follow_links=False`, no symbolic link as the last part at all;
- a size cap checked before reading (`fstat`) and while reading (never more than
  `cap + 1` bytes are read: a file that grows, or lies about its size, is refused too).

Decoding (`decode_json`, `decoding`): JSON is given a decoded-size budget, estimated
before a byte is decoded (every `,`, `:`, `[` and `{` may make a value of
`VALUE_BYTES`: 80M empty lists in a 256 MiB file are 5 GB of Python objects), and any
decoding is run under `decoding`, which turns MemoryError and RecursionError into the
same refusal.

A refusal is `InputRefused` (kbase_ci.errors): exit 2, its message naming the file, and
an OSError too, so a caller that treats an unreadable file as absent treats a refused
one so (the hook asks git for a note it cannot read). Callers whose inputs have their
own error (an index: IndexFormatError; `.kbase.yml`: a located KB900) turn it into that.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from kbase_ci.errors import InputRefused

VALUE_BYTES = 64
"""What one decoded JSON value may cost at most, about: an empty list is 56 bytes and
the pointer to it 8; a small int 28 + 8."""
DECODE_BUDGET = 2 << 30
"""Estimated memory one decoded file may take (`decode_json`), by default."""
_BLOCK = 1 << 20


class NotRegular(InputRefused):
    """A path that is a FIFO, socket or device, not a file."""


def _where(path: Path | str) -> str:
    return os.fspath(path)


def _outside(path: Path | str, within: Path | str) -> str | None:
    """The real path of `path` when it leads out of `within` (after every link), else
    None. `within` is resolved only when the answer depends on it (callers mostly pass a
    folder that is real already: a repository's root, a model's tree)."""
    real = os.path.realpath(path)
    for base in (os.fspath(within), os.path.realpath(within)):
        if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
            return None
    return real


def _open(path: Path | str, within: Path | str | None, follow_links: bool) -> int:
    if within is not None and (real := _outside(path, within)) is not None:
        raise InputRefused(_where(path), f"a symbolic link out of {_where(within)} "
                           f"(to {real}); not read")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    return os.open(path, flags)


def _size(fd: int, where: str, cap: int | None) -> int:
    """The regular file's size, refused when it is not one or is above `cap`."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegular(where, "not a regular file (a FIFO, socket or device); not read")
    if cap is not None and st.st_size > cap:
        raise _too_large(where, cap, st.st_size)
    return st.st_size


def _too_large(where: str, cap: int, size: int | None = None) -> InputRefused:
    got = f"{size} bytes" if size is not None else "larger"
    return InputRefused(where, f"{got}, more than the {cap} bytes kbase reads of such a "
                        "file; not read")


def _read_fd(fd: int, where: str, cap: int | None) -> bytes:
    size = _size(fd, where, cap)
    limit = None if cap is None else cap + 1
    chunks: list[bytes] = []
    total = 0
    # The size first: a 1 MiB read buffer for a 2 KB note costs an mmap each time.
    want = size + 1 if limit is None else min(size + 1, limit)
    while chunk := os.read(fd, want):
        chunks.append(chunk)
        total += len(chunk)
        if limit is not None and total >= limit:
            raise _too_large(where, limit - 1)
        want = _BLOCK if limit is None else min(_BLOCK, limit - total)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_input(path: Path | str, cap: int | None = None, *, within: Path | str | None = None,
               follow_links: bool = True) -> bytes:
    """The bytes of regular file `path`, at most `cap` of them (None: no cap; a note's
    blob from the work tree, which git holds whole anyway). InputRefused (see the
    module docstring); other OSErrors (missing, no permission) as they come."""
    fd = _open(path, within, follow_links)
    try:
        return _read_fd(fd, _where(path), cap)
    finally:
        os.close(fd)


def read_open(fh: BinaryIO, where: str, cap: int | None) -> bytes:
    """The bytes of an already opened file (a pinned index generation's), checked as
    `read_input` checks a path. The file must have been opened without blocking on a
    FIFO (`O_NONBLOCK`) or be known to be regular (an index listing checked it)."""
    return _read_fd(fh.fileno(), where, cap)


def input_blocks(path: Path | str, cap: int | None, *, within: Path | str | None = None
                 ) -> Iterator[bytes]:
    """The bytes of `path` in blocks of at most 1 MiB (for hashing a large file without
    holding it), checked as `read_input` checks them."""
    fd = _open(path, within, True)
    try:
        _size(fd, _where(path), cap)
        total = 0
        while block := os.read(fd, _BLOCK):
            total += len(block)
            if cap is not None and total > cap:
                raise _too_large(_where(path), cap)
            yield block
    finally:
        os.close(fd)


def check_input(path: Path | str, cap: int | None, *, within: Path | str | None = None
                ) -> int:
    """The size of `path` after the checks of `read_input`, reading nothing: for a file
    a library opens by its path (an ONNX graph, a tokenizer)."""
    fd = _open(path, within, True)
    try:
        return _size(fd, _where(path), cap)
    finally:
        os.close(fd)


def is_input(path: Path | str, cap: int | None = None, *,
             within: Path | str | None = None) -> bool:
    """Whether `path` passes `check_input` (a missing file does not)."""
    try:
        check_input(path, cap, within=within)
    except OSError:  # InputRefused included
        return False
    return True


DECODING_FAILURES = (RecursionError, MemoryError)
"""What decoding input may raise that is the input's fault (`refusal` names it)."""


def refusal(where: str, exc: BaseException) -> InputRefused:
    """The refusal for one of `DECODING_FAILURES` raised decoding `where`: a decoder that
    recurses per nesting level, a structure too large to hold."""
    if isinstance(exc, RecursionError):
        return InputRefused(where, "nested too deeply to decode; not read")
    return InputRefused(where, "too large to decode in memory; not read")


@contextlib.contextmanager
def decoding(where: str) -> Iterator[None]:
    """Decode inside this: `DECODING_FAILURES` become InputRefused naming `where`. (A
    reader decoding many small parts catches them itself and calls `refusal`: a context
    manager costs a few microseconds a use.)"""
    try:
        yield
    except DECODING_FAILURES as exc:
        raise refusal(where, exc) from None


def estimate(raw: bytes | str) -> int:
    """An upper estimate of the memory `json.loads(raw)` takes: every value but the first
    follows a `,` or `:` or opens with `[`/`{`, and costs at most `VALUE_BYTES` besides
    its text. Four scans in C, no decoding."""
    if isinstance(raw, str):
        marks = raw.count(",") + raw.count(":") + raw.count("[") + raw.count("{")
    else:
        marks = raw.count(b",") + raw.count(b":") + raw.count(b"[") + raw.count(b"{")
    return len(raw) + VALUE_BYTES * (marks + 1)


def within_budget(raw: bytes | str, where: str, budget: int = DECODE_BUDGET) -> None:
    """InputRefused unless JSON `raw` decodes within `budget` bytes (`estimate`). Text
    of fewer than `budget / (VALUE_BYTES + 1)` characters cannot exceed it (each value
    costs at least one character): it is not counted (every query decodes notes.json)."""
    if len(raw) * (VALUE_BYTES + 1) + VALUE_BYTES <= budget:
        return
    need = estimate(raw)
    if need > budget:
        raise InputRefused(where, f"would take about {need >> 20} MiB to decode, more than "
                           f"the {budget >> 20} MiB kbase decodes of one file; not read")


def decode_json(raw: bytes | str, where: str, *, budget: int = DECODE_BUDGET) -> Any:
    """`json.loads(raw)` within `budget` bytes of estimated memory (`within_budget`),
    every failure an InputRefused naming `where` (with the line and column of a syntax
    error)."""
    within_budget(raw, where, budget)
    with decoding(where):
        try:
            return json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputRefused(where, f"not JSON: {exc.msg}", exc.lineno, exc.colno
                               ) from None
        except UnicodeDecodeError as exc:
            raise InputRefused(where, f"not UTF-8 JSON: {exc.reason} at byte {exc.start}"
                               ) from None
        except ValueError as exc:  # nesting the C scanner refuses, huge int literals
            raise InputRefused(where, f"not JSON: {str(exc)[:200]}") from None


def load_json_file(path: Path | str, cap: int, *, within: Path | str | None = None,
                   follow_links: bool = True, budget: int = DECODE_BUDGET) -> Any:
    """`decode_json` of `read_input(path, cap, ...)`."""
    raw = read_input(path, cap, within=within, follow_links=follow_links)
    return decode_json(raw, _where(path), budget=budget)
