"""Query figures from a fresh clone (the index only on `origin/kbase-index`, as an agent
finds it): whole-process wall time of the real `kbase` command, median of N runs, for the
first query (which materialises the branch under .git/kbase/index/), `search` BM25 and
hybrid (model load included), `backlinks`, `explore` and `context`; and warm MCP round
trips (bench/mcp_speed.py, in a child process). Targets (issue 5): first < 1.5 s, bm25 <
150 ms, backlinks and explore < 100 ms, hybrid < 500 ms."""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.figure import run_cmd, summary
from bench.workloads import ROOT, clone

KBASE = [sys.executable, "-m", "kbase_ci"]
_ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
_MCP_LINE = re.compile(r"^(.+?): median ([\d.]+) ms, p90 ([\d.]+) ms, server cpu ([\d.na]+) "
                       r"ms/call \((\d+) calls\)", re.M)
_MCP_START = re.compile(r"^server start \(open index \+ handshake\): (\d+) ms", re.M)


def wall(cmd: list[str], cwd: Path) -> float:
    """Seconds of one whole-process run (exit 0 or 1: no results is an answer)."""
    t0 = time.perf_counter()
    run_cmd(cmd, cwd, _ENV)
    return time.perf_counter() - t0


def _times(cmd: list[str], cwd: Path, runs: int) -> list[float]:
    if runs > 1:  # warm-up: page cache, materialised index (skipped by the smoke run)
        wall(cmd, cwd)
    return [wall(cmd, cwd) for _ in range(runs)]


def build(vault: Path, out: Path, model: Path | None) -> Path:
    """`kbase index` of VAULT's HEAD into OUT (the work tree is not touched)."""
    flags = ["--model", str(model)] if model else []
    with tempfile.TemporaryDirectory(prefix="kbase-bench-build-") as tmp:
        clone(vault, Path(tmp) / "v")
        run_cmd([*KBASE, "index", *flags, "--out", str(out)], Path(tmp) / "v", _ENV, ok=(0,))
    return out


def measure(vault: Path, index: Path, runs: int, model: Path | None, query: str, note: str
            ) -> tuple[list[dict[str, Any]], list[str]]:
    figs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="kbase-bench-query-") as tmp:
        src = Path(tmp) / "src"  # VAULT with INDEX (built at its HEAD) published
        clone(vault, src)
        (src / ".git" / "info" / "exclude").write_text(".kbase/\n", encoding="utf-8")
        shutil.copytree(index, src / ".kbase")
        run_cmd([*KBASE, "publish"], src, _ENV, ok=(0,))
        firsts = []
        for i in range(runs):
            clone(src, Path(tmp) / f"clone{i}")
            firsts.append(wall([*KBASE, "search", query, "--mode", "bm25"],
                               Path(tmp) / f"clone{i}"))
        figs.append(summary("first query (materialise index branch + bm25 search)",
                            vault.name, firsts, [],
                            f'kbase search "{query}" --mode bm25 (fresh clone)'))
        mflag = ["--model", str(model)] if model else []
        cases = [
            ("search --mode bm25", ["search", query, "--mode", "bm25"]),
            ("search (hybrid)", ["search", query, *mflag]),
            ("backlinks", ["backlinks", note]),
            ("explore", ["explore", note]),
            ("context", ["context", note]),
            ("context --query", ["context", "--query", query]),
        ]
        for label, args in cases:
            shown = "kbase " + " ".join(f'"{a}"' if " " in a else a for a in args)
            figs.append(summary(label, vault.name,
                                _times([*KBASE, *args], Path(tmp) / "clone0", runs), [],
                                shown))
    return figs, []


def mcp(runs: int, vault: Path, index: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Warm MCP round trips on VAULT with INDEX (copied), by bench/mcp_speed.py."""
    argv = ["--runs", str(runs), "--vault", str(vault), "--index", str(index)]
    proc = run_cmd([sys.executable, "-m", "bench.mcp_speed", *argv], ROOT, ok=(0,))
    command = "python -m bench.mcp_speed " + " ".join(argv)
    figs: list[dict[str, Any]] = []
    if m := _MCP_START.search(proc.stdout):
        figs.append({"name": "MCP server start (open index + handshake)",
                     "workload": "gen10k", "unit": "ms", "n": 1, "median": float(m[1]),
                     "min": None, "max": None, "cpu": None, "command": command})
    for m in _MCP_LINE.finditer(proc.stdout):
        cpu = None if m[4] == "nan" else float(m[4])
        figs.append({"name": f"MCP {m[1]} (warm round trip)", "workload": "gen10k",
                     "unit": "ms", "n": int(m[5]), "median": float(m[2]), "min": None,
                     "max": None, "p90": float(m[3]), "cpu": cpu, "command": command})
    return figs, ([] if figs else ["bench.mcp_speed printed no figures"])
