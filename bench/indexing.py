"""Index figures (full and incremental build by stage, artifact size, peak memory) and the
scaling series (1k -> 10k -> 50k notes). Each build runs bench/index_build.py's `one()` in
a child process, so its peak RSS is that vault's alone.

Child entry: `python -m bench.indexing VAULT [--model DIR]` prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.figure import clock, once, run_cmd, value
from bench.workloads import ROOT, clone, kbase

STAGE_KEYS = ("full_cold_s", "full_warm_s", "incremental_s")


def build_record(vault: Path, model: Path | None) -> tuple[dict[str, Any], str]:
    """index_build.one() on VAULT (a git repo, or "tldr") in a child process."""
    cmd = [sys.executable, "-m", "bench.indexing", str(vault)]
    cmd += ["--model", str(model)] if model else []
    proc = run_cmd(cmd, ROOT, ok=(0,))
    return json.loads(proc.stdout.strip().splitlines()[-1]), " ".join(
        ["python -m bench.indexing", *cmd[3:]])


def figures(rec: dict[str, Any], workload: str, command: str) -> list[dict[str, Any]]:
    out = [
        once("full build, cold parse cache", workload, rec["full_cold_s"],
             rec["full_cold_cpu_s"], command, stages=rec["stages_cold"]),
        once("full build, warm parse cache", workload, rec["full_warm_s"],
             rec["full_warm_cpu_s"], command, stages=rec["stages_warm"]),
        once("incremental build (one note of the largest shard changed)", workload,
             rec["incremental_s"],
             rec["incremental_cpu_s"], command, stages=rec["incremental_stages"],
             shards=rec["incremental_shards"]),
        value("artifact size", workload, rec["index_mb"], "MB", command,
              markdown_mb=rec["markdown_mb"], ratio=rec["index_over_markdown"],
              zlib_mb=rec["index_zlib_mb"], zlib_ratio=rec["index_over_markdown_zlib"],
              by_file=rec["index_mb_by_file"]),
        value("peak memory (build process)", workload, rec["peak_rss_mb"], "MB", command,
              workers_mb=rec["peak_rss_workers_mb"]),
    ]
    for fig in out:
        fig["counts"] = rec.get("counts")
    return out


def check_all_cold(vault: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kbase-bench-scale-") as tmp:
        work = clone(vault, Path(tmp) / "v")
        wall, cpu, _ = clock(lambda: run_cmd([*kbase(), "check", "--all"], work))
    return once("cold `kbase check --all`", vault.name, wall, cpu, "kbase check --all")


def _child(argv: Sequence[str]) -> int:
    from bench import index_build

    ap = argparse.ArgumentParser(prog="python -m bench.indexing")
    ap.add_argument("vault", help='a git repository, or "tldr" for the tldr-pages corpus')
    ap.add_argument("--model", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.vault == "tldr":
        name = "tldr"
    else:
        # index_build.prepare() clones its GEN10K vault; point it at this one.
        index_build.GEN10K = Path(args.vault)
        name = "gen10k"
    rec = index_build.one(name, args.model, None, "")
    rec["vault"] = args.vault
    print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
