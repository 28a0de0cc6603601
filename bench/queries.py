"""Query figures from a fresh clone (the index only on `origin/kbase-index`, as an agent
finds it) and warm MCP round trips. Whole-process times through bench/query_speed.py's
runner; MCP through bench/mcp_speed.py."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import query_speed
from bench.figure import run_cmd, summary
from bench.workloads import ROOT

_MCP_LINE = re.compile(r"^(.+?): median ([\d.]+) ms, p90 ([\d.]+) ms, server cpu ([\d.na]+) "
                       r"ms/call \((\d+) calls\)", re.M)
_MCP_START = re.compile(r"^server start \(open index \+ handshake\): (\d+) ms", re.M)


def _has_command(name: str) -> bool:
    proc = subprocess.run([*query_speed.KBASE, name, "--help"], cwd=ROOT, capture_output=True,
                          check=False, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    return proc.returncode == 0


def _times(cmd: list[str], cwd: Path, runs: int) -> list[float]:
    if runs > 1:  # warm-up: page cache, materialised index (skipped by the smoke run)
        query_speed._run(cmd, cwd)
    return [query_speed._run(cmd, cwd) for _ in range(runs)]


def _published(vault: Path, work: Path, index: Path) -> Path:
    """A clone of VAULT with INDEX (built by `kbase index` at VAULT's HEAD) published."""
    src = work / "src"
    subprocess.run([*query_speed._GIT, "clone", "-q", str(vault), str(src)], check=True,
                   capture_output=True)
    (src / ".git" / "info" / "exclude").write_text(".kbase/\n", encoding="utf-8")
    shutil.copytree(index, src / ".kbase")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    run_cmd([*query_speed.KBASE, "publish"], src, env, ok=(0,))
    return src


def build(vault: Path, out: Path, model: Path | None) -> Path:
    """`kbase index` of VAULT's HEAD into OUT (the work tree is not touched)."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    flags = ["--model", str(model)] if model else []
    with tempfile.TemporaryDirectory(prefix="kbase-bench-build-") as tmp:
        src = Path(tmp) / "v"
        subprocess.run([*query_speed._GIT, "clone", "-q", str(vault), str(src)], check=True,
                       capture_output=True)
        run_cmd([*query_speed.KBASE, "index", *flags, "--out", str(out)], src, env, ok=(0,))
    return out


def measure(vault: Path, index: Path, runs: int, model: Path | None, query: str, note: str
            ) -> tuple[list[dict[str, Any]], list[str]]:
    figs: list[dict[str, Any]] = []
    notes: list[str] = []
    kb = query_speed.KBASE
    w = vault.name
    with tempfile.TemporaryDirectory(prefix="kbase-bench-query-") as tmp:
        src = _published(vault, Path(tmp), index)
        firsts = []
        for i in range(runs):
            fresh = Path(tmp) / f"clone{i}"
            subprocess.run([*query_speed._GIT, "clone", "-q", str(src), str(fresh)],
                           check=True, capture_output=True)
            firsts.append(query_speed._run([*kb, "search", query, "--mode", "bm25"], fresh))
        figs.append(summary("first query (materialise index branch + bm25 search)", w,
                            firsts, [], f'kbase search "{query}" --mode bm25 (fresh clone)'))
        clone = Path(tmp) / "clone0"
        mflag = ["--model", str(model)] if model else []
        cases = [
            ("search --mode bm25", [*kb, "search", query, "--mode", "bm25"]),
            ("search (hybrid)", [*kb, "search", query, *mflag]),
            ("backlinks", [*kb, "backlinks", note]),
            ("explore", [*kb, "explore", note]),
        ]
        if _has_command("context"):
            cases.append(("context", [*kb, "context", note]))
            cases.append(("context --query", [*kb, "context", "--query", query]))
        else:
            notes.append("`kbase context` not available in this checkout: not measured")
        for label, cmd in cases:
            shown = "kbase " + " ".join(f'"{a}"' if " " in a else a for a in cmd[3:])
            figs.append(summary(label, w, _times(cmd, clone, runs), [], shown))
    return figs, notes


def mcp(runs: int, vault: Path, index: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """ServerState MCP round trips on VAULT with INDEX (copied), by bench/mcp_speed.py."""
    try:
        from bench import mcp_speed
    except ImportError as exc:
        return [], [f"MCP round trips not available ({exc})"]
    if not _has_command("mcp"):
        return [], ["`kbase mcp` not available in this checkout: not measured"]
    if hasattr(mcp_speed, "measure"):
        return list(mcp_speed.measure(runs=runs)), []
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
