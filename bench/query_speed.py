"""Query latency in a fresh clone: `python -m bench.query_speed [--vault DIR] [--runs N]`.

Builds the index of a scratch clone of the generated 10k-note vault (with the real
model), publishes it with `kbase publish`, then `git clone`s that repository: the clone
has the index only as `origin/kbase-index`. Whole-process wall and CPU times of the real `kbase`
command, median of N runs:
- the first query, which materialises the branch under .git/kbase/index/;
- `search --mode bm25`, `backlinks`, `explore`, hybrid `search` (model load included);
- `rg -l` (or `grep -rlF` when rg is absent) for the same query terms, for scale.
Targets (issue 5): first < 1.5 s, bm25 < 150 ms, backlinks and explore < 100 ms,
hybrid < 500 ms.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEN10K = Path("/tmp/kbase-bench/gen10k")
MODEL = ROOT.parent / "shared" / "models" / "minilm-static-256"
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@kbase.invalid",
        "-c", "commit.gpgsign=false", "-c", "gc.auto=0"]
KBASE = [sys.executable, "-m", "kbase_ci"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_cpu(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; CPU (user + system of the child) is what to
    compare on a machine shared with other work."""
    c0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-500:]}")
    return wall, cpu


def _run(cmd: list[str], cwd: Path) -> float:
    return _run_cpu(cmd, cwd)[0]


def _median(cmd: list[str], cwd: Path, runs: int) -> float:
    return statistics.median(_run(cmd, cwd) for _ in range(runs))


def _medians(cmd: list[str], cwd: Path, runs: int) -> str:
    got = [_run_cpu(cmd, cwd) for _ in range(runs)]
    wall = statistics.median(w for w, _ in got)
    cpu = statistics.median(c for _, c in got)
    return f"{wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU (median of {runs})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, default=GEN10K)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--query", default="replica consistency")
    ap.add_argument("--note", default="Home")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kbase-qspeed-"))
    try:
        src = work / "src"
        subprocess.run([*_GIT, "clone", "-q", str(args.vault), str(src)], check=True)
        (src / ".git" / "info" / "exclude").write_text(".kbase/\n")
        model = ["--model", str(MODEL)] if MODEL.is_dir() else []
        t0 = time.perf_counter()
        subprocess.run([*KBASE, "index", *model], cwd=src, check=True, capture_output=True,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        print(f"index build: {time.perf_counter() - t0:.1f} s")
        subprocess.run([*KBASE, "publish"], cwd=src, check=True, capture_output=True,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        clone = work / "clone"
        subprocess.run([*_GIT, "clone", "-q", str(src), str(clone)], check=True)
        q = args.query
        first, first_cpu = _run_cpu([*KBASE, "search", q, "--mode", "bm25"], clone)
        print(f"first query (materialise + bm25 search): {first * 1000:.0f} ms wall, "
              f"{first_cpu * 1000:.0f} ms CPU")
        rows = [
            ("search --mode bm25", [*KBASE, "search", q, "--mode", "bm25"]),
            ("backlinks", [*KBASE, "backlinks", args.note]),
            ("explore", [*KBASE, "explore", args.note]),
            ("search (hybrid)", [*KBASE, "search", q, *model]),
        ]
        for name, cmd in rows:
            print(f"{name}: {_medians(cmd, clone, args.runs)}")
        terms = q.split()
        pattern = [x for t in terms for x in ("-e", t)]
        rg = shutil.which("rg")  # absolute: the runs get PATH=/usr/bin:/bin only
        if rg:
            tool, label = [rg, "-l", "-i", "-F", *pattern], "rg -l"
        else:
            tool = ["grep", "-rliF", "--include=*.md", *pattern, "."]
            label = "grep -rliF (rg not installed)"
        base = _median(tool, clone, args.runs)
        bm = _median([*KBASE, "search", q, "--mode", "bm25"], clone, args.runs)
        print(f"{label} for {terms}: {base * 1000:.0f} ms; bm25 search / {label.split()[0]} "
              f"= {bm / base:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
