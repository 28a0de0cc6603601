"""A bounded-size check of complexity: run a call on a large hostile input in a forked
child whose CPU time is capped (RLIMIT_CPU), and fail if it is killed.

Issue 22: every scan over a line or a note is linear, so a 1 MB line takes well under
the cap; a quadratic scan takes minutes and is killed at the cap. CPU time, not wall
time: the machine's load does not move it. This is a correctness test of complexity,
not a benchmark (speed targets live in bench/)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable
from typing import Any


def within_cpu(seconds: int, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)` run in a child limited to `seconds` of CPU; its result (JSON
    data or a CompletedProcess), or AssertionError when it ran out of time or raised."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read)
        code = 0
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))
            got = fn(*args, **kwargs)
            if isinstance(got, subprocess.CompletedProcess):
                got = {"completed": [list(got.args), got.returncode, got.stdout, got.stderr]}
            else:
                got = {"value": got}
            payload = json.dumps(got).encode()
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
    if "completed" in got:
        args_, code, out, err = got["completed"]
        return subprocess.CompletedProcess(args_, code, out, err)
    return got["value"]
