"""The complexity check itself (tests/complexity.py): it passes linear code, and it fails
quadratic code, a crash and a hang, so the growth-ratio tests that use it can fail on the
defects they guard (tests/unit/*/test_*_scans.py, tests/slow/test_linear_scans.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.complexity import assert_linear, within_cpu

LINE = "see [[A]]. "


def line_of(size: int) -> str:
    return LINE * (size // len(LINE))


def _links(line: str) -> Iterator[int]:
    col = line.find("[[")
    while col >= 0:
        yield col
        col = line.find("[[", col + 2)


def sentence_numbers_linear(line: str) -> int:
    """For each link, how many sentences end before it: the stops between the previous
    link and this one, added to the count so far."""
    total = stops = prev = 0
    for col in _links(line):
        stops += sum(1 for char in line[prev:col] if char == ".")
        total += stops
        prev = col
    return total


def sentence_numbers_quadratic(line: str) -> int:
    """The same answer the way the issue 22 bug found it: the line before each link read
    again for every link (query/links.py did this: 33 s for a line of 20k links)."""
    return sum(sum(1 for char in line[:col] if char == ".") for col in _links(line))


def test_a_linear_scan_passes_and_returns_its_answer_on_the_larger_input() -> None:
    got = assert_linear(line_of, sentence_numbers_linear, 1_000_000)
    assert got == sentence_numbers_linear(line_of(2_000_000))


def test_the_two_scans_agree() -> None:
    for size in (0, 11, 1_000, 5_000):
        assert sentence_numbers_linear(line_of(size)) == sentence_numbers_quadratic(
            line_of(size))


def test_a_quadratic_scan_fails() -> None:
    with pytest.raises(AssertionError, match=r"x \(.* the CPU \(n=6000; .*not linear"):
        assert_linear(line_of, sentence_numbers_quadratic, 6_000)


def test_a_quadratic_scan_fails_even_when_timed_once() -> None:
    with pytest.raises(AssertionError, match="not linear"):
        assert_linear(line_of, sentence_numbers_quadratic, 6_000, rounds=1)


def test_a_scan_that_never_ends_fails_at_the_budget() -> None:
    def spin(_: str) -> None:
        while True:
            pass

    with pytest.raises(AssertionError, match="ran out of its CPU budget"):
        assert_linear(line_of, spin, 10, budget=1)


def test_a_crash_of_native_code_fails_the_test_not_pytest() -> None:
    def crash(_: str) -> None:
        os.kill(os.getpid(), signal.SIGSEGV)

    with pytest.raises(AssertionError, match=f"died of signal {int(signal.SIGSEGV)}"):
        assert_linear(line_of, crash, 10)


def test_an_exception_is_reported_with_its_traceback() -> None:
    def fails(_: str) -> None:
        raise ValueError("bad input")

    with pytest.raises(AssertionError, match="ValueError: bad input"):
        within_cpu(10, fails, "x")


def test_completed_processes_come_back_whole() -> None:
    def child() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", "print('hi')"], capture_output=True,
                              text=True, check=False)

    got = within_cpu(30, child)
    assert isinstance(got, subprocess.CompletedProcess)
    assert (got.returncode, got.stdout) == (0, "hi\n")
