"""Timed figures: medians of N runs with min and max, wall and CPU, and the command line."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any


def _cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def clock(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall s, CPU s of this process and finished children, result) of one call."""
    c0, t0 = _cpu(), time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, _cpu() - c0, result


def run_cmd(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None,
            ok: Sequence[int] = (0, 1)) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)
    if proc.returncode not in ok:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: "
                           f"{(proc.stderr or proc.stdout)[-400:]}")
    return proc


def process_cpu(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None, *,
                out: IO[bytes] | None = None, ok: Sequence[int] = (0, 1)) -> float:
    """CPU seconds (user + system, `os.wait4`) of `cmd` and the children it waited for;
    its output goes to `out` (stdout and stderr) or nowhere. Exits on another code."""
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=env,
                            stdout=out if out is not None else subprocess.DEVNULL,
                            stderr=subprocess.STDOUT if out is not None else subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) not in ok:
        sys.exit(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime


def summary(name: str, workload: str, walls: Sequence[float], cpus: Sequence[float],
            command: str, *, unit: str = "ms", **extra: Any) -> dict[str, Any]:
    scale = 1000.0 if unit == "ms" else 1.0
    fig: dict[str, Any] = {
        "name": name, "workload": workload, "unit": unit, "n": len(walls),
        "median": round(statistics.median(walls) * scale, 1),
        "min": round(min(walls) * scale, 1), "max": round(max(walls) * scale, 1),
        "cpu": round(statistics.median(cpus) * scale, 1) if cpus else None,
        "command": command,
    }
    fig.update(extra)
    return fig


def repeat(name: str, workload: str, fn: Callable[[], Any], runs: int, command: str, *,
           unit: str = "ms", warmup: bool = True, **extra: Any) -> dict[str, Any]:
    if warmup and runs > 1:
        fn()
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(runs):
        wall, cpu, _ = clock(fn)
        walls.append(wall)
        cpus.append(cpu)
    return summary(name, workload, walls, cpus, command, unit=unit, **extra)


def once(name: str, workload: str, seconds: float, cpu: float | None, command: str, *,
         unit: str = "s", **extra: Any) -> dict[str, Any]:
    scale = 1000.0 if unit == "ms" else 1.0
    fig: dict[str, Any] = {"name": name, "workload": workload, "unit": unit, "n": 1,
                           "median": round(seconds * scale, 2), "min": None, "max": None,
                           "cpu": round(cpu * scale, 2) if cpu is not None else None,
                           "command": command}
    fig.update(extra)
    return fig


def value(name: str, workload: str, amount: float | int | str, unit: str, command: str,
          **extra: Any) -> dict[str, Any]:
    """A measured quantity that is not a time (size, memory, a count)."""
    fig: dict[str, Any] = {"name": name, "workload": workload, "unit": unit, "n": 1,
                           "median": amount, "min": None, "max": None, "cpu": None,
                           "command": command}
    fig.update(extra)
    return fig
