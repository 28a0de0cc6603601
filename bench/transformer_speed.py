"""Transformer-tier build throughput: `python -m bench.transformer_speed [--vaults A,B]
[--model DIR] [--tree CHECKOUT] [--jobs N]`.

Each shared vault is copied into a scratch git repository and indexed cold (`kbase
index --no-cache`, the real CLI, under `nice -n 5`) with the ONNX model
(../shared/models/minilm-l6-onnx by default). Printed per vault, as one JSON line: the
chunks embedded and the chunks/s `kbase index` reports on stderr, the whole build's wall
and CPU seconds (the build and its workers), chunks per CPU second (what the machine's
load does not change much), and the load average before and after. `--tree` runs
another checkout's `kbase_ci` (e.g. a `git worktree` of an earlier commit) for a
before/after pair. Target (issue 32): >= 250 chunks/s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
MODEL = SHARED / "models" / "minilm-l6-onnx"
_RATE = re.compile(r"embedded (\d+) chunks in ([\d.]+) s \((\d+) chunks/s\)")
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@kbase.invalid",
        "-c", "commit.gpgsign=false"]


def _vault(name: str, scratch: Path) -> Path:
    dest = scratch / name
    shutil.copytree(SHARED / "corpora" / name / "vault", dest)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", name]):
        subprocess.run([*_GIT, *args], cwd=dest, check=True, capture_output=True)
    return dest


def one(name: str, model: Path, tree: Path | None, jobs: int | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="kbase-tspeed-") as tmp:
        repo = _vault(name, Path(tmp))
        env = dict(os.environ)
        if tree is not None:
            env["PYTHONPATH"] = str(tree)
        cmd = ["nice", "-n", "5", sys.executable, "-m", "kbase_ci", "index", "--offline",
               "--no-cache", "--out", str(Path(tmp) / "out"), "--model", str(model)]
        if jobs is not None:
            cmd += ["--jobs", str(jobs)]
        load0 = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: kbase index failed:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = _RATE.search(proc.stderr)
    chunks = int(found.group(1)) if found else int(
        re.search(r"(\d+) chunks", proc.stdout).group(1))  # type: ignore[union-attr]
    return {"vault": name, "tree": str(tree or ROOT), "chunks": chunks,
            "reported_chunks_per_s": int(found.group(3)) if found else None,
            "embed_s": float(found.group(2)) if found else None,
            "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "chunks_per_wall_s": round(chunks / wall, 1),
            "chunks_per_cpu_s": round(chunks / cpu, 1) if cpu else None,
            "load_before": round(load0, 2), "load_after": round(os.getloadavg()[0], 2),
            "cores": os.cpu_count()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vaults", default="obsidian-tasks-docs,dnd-5e-srd")
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--tree", type=Path, default=None,
                    help="another checkout whose kbase_ci runs (before/after)")
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args(argv)
    if not args.model.is_dir():
        print(f"skipped: no model at {args.model}", file=sys.stderr)
        return 0
    for name in args.vaults.split(","):
        print(json.dumps(one(name, args.model, args.tree, args.jobs)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
