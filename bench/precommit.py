"""Pre-commit figures: `kbase check` on one changed note (cold, warm), `--all` cold, and
`pre-commit run` with the hook against a no-op hook. The warm, `--all` and pre-commit
numbers come from bench/check_speed.py itself (its printed lines are parsed, so the
script stays the one place that defines those measurements)."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from bench import check_speed
from bench.figure import clock, run_cmd, summary
from bench.workloads import clone, kbase

_COLD = re.compile(r"^cold `kbase check --all`: ([\d.]+) s wall, ([\d.]+) s CPU", re.M)
_SERIES = re.compile(r"^(.+?): median (\d+) ms wall \(min (\d+), max (\d+), n=(\d+)\), "
                     r"median (\d+) ms CPU", re.M)
_HOOKS = re.compile(r"no-op median (\d+) ms, kbase-check median (\d+) ms; overhead over "
                    r"no-op median (-?\d+) ms \(min (-?\d+)\)")


def cold_one_note(vault: Path, runs: int) -> dict[str, Any]:
    """A fresh clone each time: no parse cache, nothing in the page cache of the clone."""
    walls: list[float] = []
    cpus: list[float] = []
    for i in range(runs):
        with tempfile.TemporaryDirectory(prefix="kbase-bench-cold-") as tmp:
            work = clone(vault, Path(tmp) / "v")
            env = check_speed._env(Path(tmp))
            notes = sorted(n for n in run_cmd(["git", "ls-files", "*.md"], work).stdout
                           .splitlines() if n)
            note = notes[(len(notes) // 2 + i) % len(notes)]
            with open(work / note, "a", encoding="utf-8") as fh:
                fh.write("\nEdited for the benchmark: see [[Home]].\n")
            run_cmd(["git", "add", note], work)
            wall, cpu, _ = clock(partial(run_cmd, [*kbase(), "check", "--staged", note],
                                         work, env))
            walls.append(wall)
            cpus.append(cpu)
    return summary("cold `kbase check --staged NOTE` (one changed note, no parse cache)",
                   vault.name, walls, cpus, "kbase check --staged NOTE (in a fresh clone)")


def measure(vault: Path, runs: int) -> tuple[list[dict[str, Any]], list[str]]:
    figures = [cold_one_note(vault, runs)]
    notes: list[str] = []
    argv = ["--vault", str(vault), "--runs", str(runs)]
    command = f"python -m bench.check_speed {' '.join(argv)}"
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            check_speed.main(argv)
    except SystemExit as exc:  # check_speed reports a failed pre-commit run this way
        notes.append(f"check_speed stopped: {str(exc)[:300]}")
    text = buf.getvalue()
    if m := _COLD.search(text):
        figures.append(summary("cold `kbase check --all`", vault.name, [float(m[1])],
                               [float(m[2])], command, unit="s"))
    for m in _SERIES.finditer(text):
        walls = [int(m[2]) / 1000, int(m[3]) / 1000, int(m[4]) / 1000]
        fig = summary(m[1], vault.name, walls, [int(m[6]) / 1000], command)
        fig.update(median=float(m[2]), min=float(m[3]), max=float(m[4]), n=int(m[5]))
        figures.append(fig)
    if m := _HOOKS.search(text):
        for label, ms in (("pre-commit hook duration: no-op hook", m[1]),
                          ("pre-commit hook duration: kbase-check hook", m[2]),
                          ("kbase hook overhead over the no-op hook", m[3])):
            figures.append({"name": label, "workload": vault.name, "unit": "ms",
                            "n": runs, "median": float(ms), "min": None, "max": None,
                            "cpu": None, "command": command})
    elif "pre-commit run" not in text:
        notes.append("pre-commit figures missing (is pre-commit installed?)")
    if shutil.which("git") is None:
        notes.append("git not found")
    return figures, notes


if __name__ == "__main__":
    for fig in measure(Path(sys.argv[1]), int(sys.argv[2]))[0]:
        print(fig)
