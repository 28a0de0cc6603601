"""ServerState `kbase mcp` round trips: `python -m bench.mcp_speed [--vault DIR] [--index DIR]
[--runs N]`.

Starts the real server (`kbase mcp --index ... --model ...`) with the SDK's stdio client on
a scratch clone of the generated 10k-note vault (the server refreshes the clone's git stat
cache, so the original stays untouched), warms each tool up, then times N calls each:
median and p90 client-side round trip, and the server's CPU per call (from /proc/PID/stat,
its git child processes included). Targets (issue 9): search BM25 < 30 ms, hybrid < 60 ms,
explore < 20 ms. The index is a copy of `--index` (default /tmp/kbase-bench/idx10k) when
this kbase can open it, else one built with the real model and kept in bench/out/ for the
next run (keyed by the vault's HEAD).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from bench.workloads import MODEL, PROJECT_GEN10K, ROOT

IDX10K = Path("/tmp/kbase-bench/idx10k")
QUERIES = ["replica consistency", "b-tree recipes", "garbage collection pauses",
           "schema migration rollback", "cache eviction policy"]
NOTES = ["Home", "Advanced B-Tree Recipes"]
_ENV = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}


def _prepare(vault: Path, index: Path, work: Path) -> tuple[Path, Path]:
    clone = work / "vault"
    subprocess.run(["git", "clone", "-q", str(vault), str(clone)], check=True)
    from kbase_ci.errors import KbaseError
    from kbase_ci.index.reader import open_index

    copy = work / "index"
    try:
        open_index(index)
        shutil.copytree(index, copy)
        return clone, copy
    except KbaseError as exc:
        print(f"{index} does not open ({exc}); using an index built by this kbase")
    # Kept in bench/out/ (git-ignored) for the next run while the vault's HEAD is the same.
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, check=True,
                          capture_output=True, text=True).stdout.strip()
    kept = ROOT / "bench" / "out" / f"mcp-index-{head[:12]}"
    try:
        open_index(kept)
    except KbaseError:
        shutil.rmtree(kept, ignore_errors=True)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kbase_ci", "index", "--model", str(MODEL),
                        "--out", str(kept)], cwd=clone, check=True, capture_output=True,
                       env=_ENV)
        print(f"index build: {time.perf_counter() - t0:.1f} s (kept in {kept})")
    shutil.copytree(kept, copy)
    return clone, copy


def _server_pid() -> int | None:
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me:
                return int(entry.name)
    return None


def _cpu(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # utime + stime of the server, plus its finished children (the git processes).
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


async def _bench(clone: Path, index: Path, runs: int, model: Path = MODEL) -> None:
    args = ["-m", "kbase_ci", "mcp", "--index", str(index), "--model", str(model)]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=clone,
                                   env={**os.environ, **_ENV})
    t0 = time.perf_counter()
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            print(f"server start (open index + handshake): "
                  f"{(time.perf_counter() - t0) * 1000:.0f} ms")
            pid = _server_pid()
            cases: list[tuple[str, str, list[dict[str, Any]]]] = [
                ("search bm25", "search", [{"query": q, "mode": "bm25"} for q in QUERIES]),
                ("search hybrid", "search", [{"query": q} for q in QUERIES]),
                ("explore", "links", [{"action": "explore", "note": n} for n in NOTES]),
                ("explore concise", "links",
                 [{"action": "explore", "note": n, "concise": True} for n in NOTES]),
                ("read", "read", [{"note": n} for n in NOTES]),
            ]
            for label, tool, variants in cases:
                for v in variants:  # warm-up: first use of each shard, model, note
                    first = await session.call_tool(tool, v)
                    text = getattr(first.content[0], "text", "")
                    if getattr(first, "is_error", False):
                        raise SystemExit(f"{tool} {v}: {first}")
                    notices = json.loads(text).get("notices")
                    if notices:
                        print(f"{label}: {notices}")
                times: list[float] = []
                cpu0 = _cpu(pid)
                for i in range(runs):
                    t = time.perf_counter()
                    await session.call_tool(tool, variants[i % len(variants)])
                    times.append(time.perf_counter() - t)
                cpu = (_cpu(pid) - cpu0) / runs
                p90 = sorted(times)[int(0.9 * (len(times) - 1))]
                print(f"{label}: median {statistics.median(times) * 1000:.1f} ms, "
                      f"p90 {p90 * 1000:.1f} ms, server cpu {cpu * 1000:.1f} ms/call "
                      f"({runs} calls)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, default=PROJECT_GEN10K)
    ap.add_argument("--index", type=Path, default=IDX10K)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--model", type=Path, default=MODEL,
                    help="the index's model folder (static or ONNX)")
    args = ap.parse_args()
    print("command: " + " ".join([sys.executable, "-m", "bench.mcp_speed", *sys.argv[1:]]))
    work = Path(tempfile.mkdtemp(prefix="kbase-mcpspeed-"))
    try:
        clone, index = _prepare(args.vault, args.index, work)
        anyio.run(_bench, clone, index, args.runs, args.model)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
