"""`kbase graph` speed: `python -m bench.graph_speed [--vault DIR] [--index DIR] [--runs N]`.

Clones the generated 10k-note vault (so the benchmark folders stay untouched) and times
- whole `kbase graph hubs`, `graph orphans` and `graph orphans --no-backlinks` processes
  (median wall of N runs, with the CPU time of the median run);
- in process: opening the view, `view.edges`, then each answer on that open view (the
  graph part alone: what the MCP server pays per question once the view is loaded).
Target (issue 6): `graph hubs` and `graph orphans` under 200 ms each.
The index is `--index` (default /tmp/kbase-bench/idx10k); one this kbase cannot read
(older format) is rebuilt, without vectors, in the scratch clone first.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEN10K = Path("/tmp/kbase-bench/gen10k")
IDX10K = Path("/tmp/kbase-bench/idx10k")
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@kbase.invalid",
        "-c", "commit.gpgsign=false", "-c", "gc.auto=0"]
KBASE = [sys.executable, "-m", "kbase_ci"]
ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}


def _run(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, user+sys CPU) of one process."""
    before = os.times()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False, env=ENV)
    wall = time.perf_counter() - t0
    after = os.times()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-500:]}")
    cpu = (after.children_user - before.children_user
           + after.children_system - before.children_system)
    return wall, cpu


def _usable(index: Path) -> bool:
    from kbase_ci.errors import IndexFormatError
    from kbase_ci.index.reader import open_index

    try:
        open_index(index)
    except IndexFormatError as exc:
        print(f"index {index} not usable ({exc}); rebuilding")
        return False
    return True


def _in_process(clone: Path, index: Path) -> None:
    from kbase_ci.query import graphanswer as ga
    from kbase_ci.query.discovery import open_source
    from kbase_ci.query.view import QueryView
    from kbase_ci.vault.notefiles import Vault

    t0 = time.perf_counter()
    c0 = time.process_time()
    vault = Vault(clone)
    view = QueryView(vault, open_source(vault, index))
    print(f"in process: open view {(time.perf_counter() - t0) * 1000:.0f} ms wall "
          f"{(time.process_time() - c0) * 1000:.0f} ms cpu")
    t0, c0 = time.perf_counter(), time.process_time()
    edges = view.edges
    print(f"in process: view.edges ({len(edges.paths)} notes, {len(edges.pairs)} links) "
          f"{(time.perf_counter() - t0) * 1000:.0f} ms wall "
          f"{(time.process_time() - c0) * 1000:.0f} ms cpu")
    first, last = edges.paths[0], edges.paths[len(edges.paths) // 2]
    rows = [("hubs", {}), ("orphans", {}), ("orphans", {"no_backlinks": True}),
            ("path", {"source": first, "target": last}),
            ("neighborhood", {"note": first, "depth": 2}), ("clusters", {})]
    for action, params in rows:
        walls, cpus = [], []
        for _ in range(3 if action != "clusters" else 1):
            t0, c0 = time.perf_counter(), time.process_time()
            ga.graph_answer(view, action, **params)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        label = " ".join([action, *(f"{k}={v}" for k, v in params.items())])
        print(f"in process, open view: {label}: {statistics.median(walls) * 1000:.0f} ms "
              f"wall {statistics.median(cpus) * 1000:.0f} ms cpu")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, default=GEN10K)
    ap.add_argument("--index", type=Path, default=IDX10K)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print("command:", " ".join(sys.argv))
    work = Path(tempfile.mkdtemp(prefix="kbase-gspeed-"))
    try:
        clone = work / "vault"
        subprocess.run([*_GIT, "clone", "-q", str(args.vault), str(clone)], check=True)
        (clone / ".git" / "info" / "exclude").write_text(".kbase/\n")
        index = args.index.resolve()
        if not _usable(index):
            index = work / "index"
            t0 = time.perf_counter()
            subprocess.run([*KBASE, "index", "--out", str(index)], cwd=clone, check=True,
                           capture_output=True, env=ENV)
            print(f"index build: {time.perf_counter() - t0:.1f} s")
        for argv in (["hubs"], ["orphans"], ["orphans", "--no-backlinks"]):
            cmd = [*KBASE, "graph", *argv, "--index", str(index)]
            runs = sorted(_run(cmd, clone) for _ in range(args.runs))
            wall, cpu = runs[len(runs) // 2]
            print(f"kbase graph {' '.join(argv)}: {wall * 1000:.0f} ms wall "
                  f"{cpu * 1000:.0f} ms cpu (median of {args.runs} processes)")
        _in_process(clone, index)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
