"""Whole-process speed of `kbase check` as a pre-commit hook, on a generated vault: the
suite's `precommit` group, and on its own

    python -m bench.check_speed [--vault /tmp/kbase-bench/gen10k] [--runs 15]

Works on throw-away clones of the vault (the vault itself is never changed) and measures:
- cold `kbase check --staged NOTE` in a fresh clone each run (no parse cache);
- cold `kbase check --all` (no parse cache; both cores);
- `kbase check --staged NOTE` as commits really run it: before each run the note gets a
  new line and is staged (so its new content is not in the parse cache yet), and after
  it the change is committed (so HEAD moves between runs, as from commit to commit);
- the same check repeated on unchanged staged content (everything cached: the floor),
  and with no FILES (what `always_run` gives when pre-commit passes nothing);
- `pre-commit run` with the kbase hook and a no-op hook (`entry: true`, language
  system) in the same run, again with a fresh edit staged before each run and committed
  after it: each hook's duration as pre-commit reports it, and the difference (the
  overhead the hook adds to a commit).
Times are wall clock, with the CPU time of the child processes next to it: on a shared
machine wall time also measures the neighbours. Targets: one-note warm check well
under 150 ms, hook overhead <= 100 ms over the no-op, cold --all under 15 s on 2 cores.
The edit-and-commit numbers are the ones to hold against the targets: repeating one
staged state measures only the best case.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

from bench.figure import clock, once, run_cmd, summary
from bench.machine import load
from bench.workloads import GIT, ROOT, clone, kbase

Figure = dict[str, Any]
_DURATION = re.compile(r"^- hook id: (\S+)\n(?:- .*\n)*?- duration: ([0-9.]+)s", re.MULTILINE)
_CONFIG = """repos:
  - repo: local
    hooks:
      - id: noop
        name: no-op
        entry: "true"
        language: system
        types: [markdown]
        always_run: true
        require_serial: true
      - id: kbase-check
        name: kbase check
        entry: {kbase} check --staged
        language: system
        types: [markdown]
        always_run: true
        require_serial: true
"""


def _env(home: Path) -> dict[str, str]:
    # An installed package has compiled bytecode; a session that sets
    # PYTHONDONTWRITEBYTECODE would make every run recompile ~60 modules (+~100 ms), so
    # bytecode is kept under the throw-away folder instead (the checkout stays clean).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "HOME": str(home), "PYTHONPATH": str(ROOT), "GIT_CONFIG_NOSYSTEM": "1",
            "PYTHONPYCACHEPREFIX": str(home / "pycache"),
            "PRE_COMMIT_HOME": str(home / "pre-commit"), "NO_COLOR": "1"}


class _Edits:
    """Commit-by-commit edits of one note: each `stage()` appends a new line (with a link)
    and stages it, each `commit()` commits it without hooks."""

    def __init__(self, work: Path, env: dict[str, str], note: str) -> None:
        self.work, self.env, self.note, self.n = work, env, note, 0

    def stage(self) -> None:
        self.n += 1
        with open(self.work / self.note, "a", encoding="utf-8") as fh:
            fh.write(f"\nBenchmark edit {self.n}: see [[Home]].\n")
        run_cmd([*GIT, "add", self.note], self.work, self.env, ok=(0,))

    def commit(self) -> None:
        run_cmd([*GIT, "commit", "-q", "--no-verify", "-m", f"edit {self.n}"], self.work,
                self.env, ok=(0,))


def _series(edits: _Edits, cmd: list[str], runs: int, *, new_edit: bool
            ) -> tuple[list[float], list[float], list[str]]:
    """(walls, CPUs, outputs) of `runs` runs after one warm-up (page cache, cache rows);
    `new_edit`: a new edit staged before each run and committed after it."""
    walls, cpus, outs = [], [], []
    for i in range(runs + 1):
        if new_edit:
            edits.stage()
        wall, cpu, proc = clock(lambda: run_cmd(cmd, edits.work, edits.env, ok=(0,)))
        if new_edit:
            edits.commit()
        if i:
            walls.append(wall)
            cpus.append(cpu)
            outs.append(proc.stdout + proc.stderr)
    return walls, cpus, outs


def _cold_one_note(vault: Path, runs: int) -> Figure:
    """A fresh clone each time: no parse cache, nothing in the page cache of the clone."""
    walls: list[float] = []
    cpus: list[float] = []
    for i in range(runs):
        with tempfile.TemporaryDirectory(prefix="kbase-bench-cold-") as tmp:
            work, env = clone(vault, Path(tmp) / "v"), _env(Path(tmp))
            notes = sorted(n for n in run_cmd([*GIT, "ls-files", "*.md"], work).stdout
                           .splitlines() if n)
            note = notes[(len(notes) // 2 + i) % len(notes)]
            with open(work / note, "a", encoding="utf-8") as fh:
                fh.write("\nEdited for the benchmark: see [[Home]].\n")
            run_cmd([*GIT, "add", note], work)
            wall, cpu, _ = clock(partial(run_cmd, [*kbase(), "check", "--staged", note],
                                         work, env))
            walls.append(wall)
            cpus.append(cpu)
    return summary("cold `kbase check --staged NOTE` (one changed note, no parse cache)",
                   vault.name, walls, cpus, "kbase check --staged NOTE (in a fresh clone)")


def measure(vault: Path, runs: int) -> tuple[list[Figure], list[str]]:
    command = f"python -m bench.check_speed --vault {vault} --runs {runs}"
    figures = [_cold_one_note(vault, runs)]
    with tempfile.TemporaryDirectory(prefix="kbase-check-speed-") as tmp:
        env = _env(Path(tmp))
        work = clone(vault, Path(tmp) / "vault")
        wall, cpu, proc = clock(lambda: run_cmd([*kbase(), "check", "--all"], work, env))
        figures.append(once("cold `kbase check --all`", vault.name, wall, cpu, command))
        # Edit a note without findings of its own, so every timed check exits 0.
        flagged = {ln.split(":", 1)[0] for ln in proc.stdout.splitlines()
                   if re.match(r".+:\d+:\d+: ", ln)}
        notes = sorted(n for n in run_cmd([*GIT, "ls-files", "*.md"], work).stdout
                       .splitlines() if n)
        edits = _Edits(work, env, next(n for n in notes[len(notes) // 2:]
                                       if n not in flagged))
        staged = [*kbase(), "check", "--staged", edits.note]
        for label, cmd, new_edit in (
                ("`kbase check --staged NOTE`, new edit each run (as in commits)", staged,
                 True),
                ("same staged content again, all cached (`kbase check --staged NOTE`)",
                 staged, False),
                ("same, no FILES (`kbase check --staged`)", staged[:-1], False),
                ("reference: `python -c pass`", [sys.executable, "-c", "pass"], False)):
            if label.startswith("same staged"):
                edits.stage()
            walls, cpus, _ = _series(edits, cmd, runs, new_edit=new_edit)
            figures.append(summary(label, vault.name, walls, cpus, command))
        edits.commit()
        (work / ".pre-commit-config.yaml").write_text(
            _CONFIG.format(kbase=" ".join(kbase())), encoding="utf-8")
        run_cmd([*GIT, "add", ".pre-commit-config.yaml"], work, env, ok=(0,))
        cmd = [sys.executable, "-m", "pre_commit", "run", "--verbose"]
        run_cmd(cmd, work, env)  # pre-commit sets itself up on its first run
        walls, cpus, outs = _series(edits, cmd, runs, new_edit=True)
        figures.append(summary("pre-commit run (no-op + kbase-check), new edit each run, "
                               "whole process", vault.name, walls, cpus, command))
        per_hook: dict[str, list[float]] = {"noop": [], "kbase-check": []}
        for hook, secs in (d for out in outs for d in _DURATION.findall(out)):
            per_hook.setdefault(hook, []).append(float(secs) * 1000)
    noop, hook = per_hook["noop"], per_hook["kbase-check"]
    if not noop or not hook:
        return figures, ["pre-commit did not report hook durations; output format changed?"]
    for label, ms in (("pre-commit hook duration: no-op hook", statistics.median(noop)),
                      ("pre-commit hook duration: kbase-check hook", statistics.median(hook)),
                      ("kbase hook overhead over the no-op hook",
                       statistics.median(h - n for h, n in zip(hook, noop, strict=False)))):
        figures.append(once(label, vault.name, ms / 1000, None, command, unit="ms", n=runs))
    return figures, []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vault", type=Path, default=Path("/tmp/kbase-bench/gen10k"))
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    if not (args.vault / ".git").is_dir():
        print(f"generating {args.vault} (10,000 notes) ...", flush=True)
        subprocess.run([sys.executable, "-m", "bench.generate", str(args.vault), "--notes",
                        "10000"], cwd=ROOT, check=True)
    print(f"vault: {args.vault}, {os.cpu_count()} cores, python {sys.version.split()[0]}, "
          f"load average {load()}")
    figures, notes = measure(args.vault, args.runs)
    for f in figures:
        spread = f" ({f['min']}-{f['max']}, n={f['n']})" if f["min"] is not None else ""
        cpu = f", CPU {f['cpu']} {f['unit']}" if f["cpu"] is not None else ""
        print(f"{f['name']}: median {f['median']} {f['unit']}{spread}{cpu}")
    print(*notes, f"load average at the end: {load()}", sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
