"""Complexity tests that hold on a loaded machine: growth ratios, not time limits.

Issue 22: every scan over a line or a note is linear. `assert_linear` runs a call on an
input of size n and on one of size 2n and fails when the second takes more than `limit`
(2.5) times the CPU of the first: a linear scan takes about 2x, a quadratic one about 4x.
CPU time, not wall time, and a ratio of two runs in the same child: the machine's load
moves both alike, so neither a fast machine nor two CPU burners beside the suite change
the verdict (a fixed CPU cap did: a 6 s cap on the parser failed under load at 7.6 s).

Both runs happen in a forked child (`within_cpu`) whose CPU time is capped by a generous
`budget`: a quadratic scan of a 1 MB line takes minutes, so a regression fails at the
budget instead of hanging the suite, and a crash of native code (the tree-sitter grammar
segfaulted on some inputs) fails the test instead of killing pytest. This is a correctness
test of complexity, not a benchmark (speed targets live in bench/).

tests/unit/test_complexity.py shows the check fails on deliberately quadratic code."""

from __future__ import annotations

import gc
import json
import os
import resource
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

LIMIT = 2.5
"""At most this much more CPU for twice the input (linear ~2, quadratic ~4)."""


def within_cpu(seconds: int, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` run in a child limited to `seconds` of CPU; its result (JSON
    data or a CompletedProcess), or AssertionError when it ran out of time or raised.
    A backstop against hangs, not a measure: keep `seconds` far above what the call needs
    on a loaded machine, and assert complexity with `assert_linear`."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read)
        code = 0
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
            got = fn(*args, **kwargs)
            payload = json.dumps({"value": _plain(got)}).encode()
        except BaseException:
            payload = json.dumps({"error": traceback.format_exc()}).encode()
            code = 1
        with os.fdopen(write, "wb") as fh:
            fh.write(payload)
        sys.stdout.flush()
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        why = "ran out of its CPU budget" if sig in (signal.SIGXCPU, signal.SIGKILL) else \
            f"died of signal {sig}"
        raise AssertionError(f"{getattr(fn, '__name__', fn)} {why} ({seconds} s): not linear?")
    got = json.loads(data)
    if "error" in got:
        raise AssertionError(f"{getattr(fn, '__name__', fn)} raised:\n{got['error']}")
    return _unplain(got["value"])


def assert_linear(make: Callable[[int], T], run: Callable[[T], Any], n: int, *,
                  limit: float = LIMIT, rounds: int = 3, budget: int = 120) -> Any:
    """Fail unless `run(make(2 * n))` takes at most `limit` times the CPU time of
    `run(make(n))`; the result of the run on the larger input.

    The inputs are made first (not timed), then timed small, big, small, the big run
    compared with the mean of the two small ones, so a change of the machine's speed
    during the round cancels out; when the ratio is over the limit the round is timed
    again, up to `rounds` times, and the call passes if one round kept to it: a linear
    call needs one quiet round, a quadratic one is ~4x in every round. Pass `rounds=1`
    when a second run on the same input is cheaper than the first (a command that fills a
    cache on its first run): each input is then run once, first runs compared.

    `n` must be large enough that the call's fixed costs are small beside its work and
    that a quadratic term would dominate (the sizes that made scans quadratic before)."""
    small, big = make(n), make(2 * n)

    def measure() -> dict[str, Any]:
        # The child is a copy of pytest's whole heap: frozen, a collection before each
        # run walks only what the runs made (a full one costs ~0.5 s under load).
        gc.freeze()
        pairs: list[tuple[float, float]] = []
        result: Any = None
        for _ in range(rounds):
            # small, big, small: the big run against the mean of the small runs on either
            # side of it, so a drift of the machine's speed during the round cancels out.
            took = []
            for arg in (small, big, small) if rounds > 1 else (small, big):
                gc.collect()
                start = _cpu()
                got = run(arg)
                took.append(_cpu() - start)
                if arg is big:
                    result = got
            pair = ((took[0] + took[-1]) / 2 if len(took) == 3 else took[0], took[1])
            pairs.append(pair)
            if pair[1] <= limit * pair[0]:
                break
        return {"pairs": pairs, "result": _plain(result)}

    measure.__name__ = getattr(run, "__name__", "run")
    got = within_cpu(budget, measure)
    pairs = got["pairs"]
    ratios = [big_s / max(small_s, 1e-9) for small_s, big_s in pairs]
    said = (f"{measure.__name__}: twice the input took " + ", ".join(
        f"{r:.2f}x ({a:.3f} s -> {b:.3f} s)" for r, (a, b) in zip(ratios, pairs, strict=True))
        + f" the CPU (n={n}; linear is ~2x, at most {limit}x)")
    print(said)  # shown with `pytest -s` (or -rP), and with the failure
    assert min(ratios) <= limit, f"{said}: not linear"
    return _unplain(got["result"])


def _cpu() -> float:
    """CPU seconds of this process and of the children it waited for (git, workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), \
        resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _plain(got: Any) -> Any:
    if isinstance(got, subprocess.CompletedProcess):
        return {"completed": [list(got.args), got.returncode, got.stdout, got.stderr]}
    return got


def _unplain(got: Any) -> Any:
    if isinstance(got, dict) and set(got) == {"completed"}:
        args_, code, out, err = got["completed"]
        return subprocess.CompletedProcess(args_, code, out, err)
    return got
