"""Index figures: a full build of a vault with a cold and a warm parse cache (by stage),
an incremental build after one note of the largest shard changes (one commit: the
slowest one-note rebuild), the artifact size against the vault's Markdown (raw and
zlib-compressed, which is what git stores) and peak memory; the scaling series (1k ->
10k -> 50k notes) repeats it per size. Stage seconds from workers are summed over shards
and may exceed the wall time. Targets (issue 4): 10k notes full build < 60 s on 2 cores,
incremental < 3 s, artifacts no larger than the vault's Markdown.

Each build runs in a child process, so its peak RSS is that vault's alone:
`python -m bench.indexing VAULT [--model DIR]` (VAULT a git repository, used through a
scratch clone) prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from bench.figure import clock, once, run_cmd, value
from bench.workloads import GIT, ROOT, clone, kbase


def build_record(vault: Path, model: Path | None) -> tuple[dict[str, Any], str]:
    """`one()` on VAULT in a child process; (its record, the command)."""
    cmd = [sys.executable, "-m", "bench.indexing", str(vault)]
    cmd += ["--model", str(model)] if model else []
    proc = run_cmd(cmd, ROOT, ok=(0,))
    return json.loads(proc.stdout.strip().splitlines()[-1]), " ".join(
        ["python -m bench.indexing", *cmd[3:]])


def _sizes(files: Iterable[Path]) -> tuple[int, int]:
    raw = packed = 0
    for p in files:
        data = p.read_bytes()
        raw, packed = raw + len(data), packed + len(zlib.compress(data, 6))
    return raw, packed


def _timed_build(vault_dir: Path, target: Path, model: Path | None, **kw: Any
                 ) -> tuple[Any, float, float]:
    from kbase_ci.index.indexbuild import build_index
    from kbase_ci.vault.notefiles import Vault

    wall, cpu, built = clock(lambda: build_index(Vault(vault_dir), target, model=model, **kw))
    return built, round(wall, 2), round(cpu, 2)


def one(vault: Path, model: Path | None) -> dict[str, Any]:
    from kbase_ci.index.reader import open_index
    from kbase_ci.typedjson import encode
    from kbase_ci.vault.notefiles import Vault

    out: dict[str, Any] = {"vault": str(vault), "model": model.name if model else None}
    with tempfile.TemporaryDirectory(prefix="kbase-bench-") as tmp:
        vault_dir = clone(vault, Path(tmp) / "v")
        target = vault_dir / ".kbase"
        cold, out["full_cold_s"], out["full_cold_cpu_s"] = _timed_build(
            vault_dir, target, model, use_cache=False)
        out["stages_cold"] = {k: round(v, 2) for k, v in cold.seconds.items()}
        out["counts"] = encode(cold.manifest.counts)
        # fill the parse cache, as an earlier `kbase check` does
        run_cmd([*kbase(), "check", "--all"], vault_dir)
        shutil.rmtree(target)
        warm, out["full_warm_s"], out["full_warm_cpu_s"] = _timed_build(
            vault_dir, target, model)
        out["stages_warm"] = {k: round(v, 2) for k, v in warm.seconds.items()}

        reader = open_index(target)
        shards = reader.manifest.shards
        note = reader.chunk_notes(max(sorted(shards), key=lambda s: shards[s].chunks))[0]
        with (vault_dir / note).open("a", encoding="utf-8") as fh:
            fh.write("\nOne more line about replication lag.\n")
        run_cmd([*GIT, "commit", "-q", "-am", "edit one note"], vault_dir, ok=(0,))
        inc, out["incremental_s"], out["incremental_cpu_s"] = _timed_build(
            vault_dir, target, model)
        out["incremental_stages"] = {k: round(v, 2) for k, v in inc.seconds.items()}
        out["incremental_note"] = note
        out["incremental_shards"] = (f"{len(inc.shards_built)} built, "
                                     f"{len(inc.shards_reused)} reused")

        md_raw, md_packed = _sizes(vault_dir / n.path for n in Vault(vault_dir).notes)
        files = [p for p in target.rglob("*") if p.is_file()]
        ix_raw, ix_packed = _sizes(files)
        out["markdown_mb"] = round(md_raw / 1e6, 1)
        out["index_mb"] = round(ix_raw / 1e6, 1)
        out["index_over_markdown"] = round(ix_raw / md_raw, 2)
        out["index_zlib_mb"] = round(ix_packed / 1e6, 1)
        out["index_over_markdown_zlib"] = round(ix_packed / md_packed, 2)
        by_kind: dict[str, int] = {}
        for p in files:
            kind = "bm25" if p.parent.name == "bm25" and p.parent != target else p.name
            by_kind[kind] = by_kind.get(kind, 0) + p.stat().st_size
        out["index_mb_by_file"] = {k: round(v / 1e6, 1) for k, v in sorted(by_kind.items())}
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    out["peak_rss_workers_mb"] = round(
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    return out


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


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.indexing", description=__doc__)
    ap.add_argument("vault", type=Path, help="a git repository (a scratch clone is built)")
    ap.add_argument("--model", type=Path, default=None)
    args = ap.parse_args(argv)
    print(json.dumps(one(args.vault.resolve(), args.model)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
