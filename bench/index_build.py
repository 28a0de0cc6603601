"""`kbase index` speed and size: `python -m bench.index_build [--model DIR] [--jobs N]`.

For each vault (the generated 10k-note vault and the tldr-pages corpus), in a scratch
git clone so the source stays untouched:
- full build with a cold parse cache, split by stage, and with a warm one;
- incremental build after one note of the largest shard changes (one commit): the
  slowest one-note rebuild;
- artifact size against the vault's Markdown, raw and zlib-compressed (git stores
  blobs compressed, so the second is what an index branch costs);
- peak RSS of the build process and of its worker processes.
Stage seconds from workers are summed over shards and may exceed the wall time.
Targets (issue 4): 10k notes full build < 60 s on 2 cores, incremental < 3 s,
artifacts no larger than the vault's Markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
GEN10K = Path("/tmp/kbase-bench/gen10k")
TLDR = SHARED / "corpora" / "tldr-pages" / "vault"
MODEL = SHARED / "models" / "minilm-static-256"
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@kbase.invalid",
        "-c", "commit.gpgsign=false", "-c", "gc.auto=0"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run([*_GIT, *args], cwd=cwd, check=True, capture_output=True)


def prepare(name: str, scratch: Path, config: str = "") -> Path:
    dest = scratch / name
    if name == "gen10k":
        if not GEN10K.is_dir():
            subprocess.run([sys.executable, "-m", "bench.generate", str(GEN10K), "--notes",
                            "10000"], cwd=ROOT, check=True)
        _git(scratch, "clone", "-q", "--local", str(GEN10K), str(dest))
    else:
        shutil.copytree(TLDR, dest)
        _git(dest, "init", "-q", "-b", "main")
        _git(dest, "add", "-A")
        _git(dest, "commit", "-q", "-m", "tldr")
    if config:
        (dest / ".kbase.yml").write_text(config, encoding="utf-8")
        _git(dest, "add", ".kbase.yml")
        _git(dest, "commit", "-q", "-m", "config")
    return dest


def _size(root: Path) -> tuple[int, int]:
    raw = packed = 0
    for p in root.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            raw += len(data)
            packed += len(zlib.compress(data, 6))
    return raw, packed


def _markdown(root: Path, paths: Sequence[str]) -> tuple[int, int]:
    raw = packed = 0
    for rel in paths:
        data = (root / rel).read_bytes()
        raw += len(data)
        packed += len(zlib.compress(data, 6))
    return raw, packed


def _cpu() -> float:
    """CPU seconds of this process and its finished children (less sensitive than wall
    time to other load on the machine)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _in_largest_shard(index: Path) -> str:
    """A note of the shard with the most chunks: the slowest one-note rebuild."""
    from kbase_ci.index.reader import open_index
    from kbase_ci.index.storednotes import shard_notes

    reader = open_index(index)
    shards = reader.manifest.shards
    biggest = max(sorted(shards), key=lambda sid: shards[sid].chunks)
    core = reader.core()
    path: str = core["paths"][shard_notes(core)[biggest][0]]
    return path


def one(name: str, model: Path | None, jobs: int | None, config: str) -> dict[str, object]:
    from kbase_ci.index.indexbuild import build_index
    from kbase_ci.typedjson import encode
    from kbase_ci.vault.notefiles import Vault
    from kbase_ci.vault.scanner import scan

    out: dict[str, object] = {"vault": name, "model": model.name if model else None,
                              "jobs": jobs or os.cpu_count(), "config": config or None}
    with tempfile.TemporaryDirectory(prefix="kbase-bench-") as tmp:
        vault_dir = prepare(name, Path(tmp), config)
        vault = Vault(vault_dir)
        target = vault_dir / ".kbase"
        t0, c0 = time.perf_counter(), _cpu()
        cold = build_index(vault, target, model=model, jobs=jobs, use_cache=False)
        out["full_cold_s"] = round(time.perf_counter() - t0, 2)
        out["full_cold_cpu_s"] = round(_cpu() - c0, 2)
        out["stages_cold"] = {k: round(v, 2) for k, v in cold.seconds.items()}
        out["counts"] = encode(cold.manifest.counts)
        scan(vault)  # fill the parse cache, as an earlier `kbase check` would
        shutil.rmtree(target)
        t0, c0 = time.perf_counter(), _cpu()
        warm = build_index(Vault(vault_dir), target, model=model, jobs=jobs)
        out["full_warm_s"] = round(time.perf_counter() - t0, 2)
        out["full_warm_cpu_s"] = round(_cpu() - c0, 2)
        out["stages_warm"] = {k: round(v, 2) for k, v in warm.seconds.items()}

        note = _in_largest_shard(target)
        with (vault_dir / note).open("a", encoding="utf-8") as fh:
            fh.write("\nOne more line about replication lag.\n")
        _git(vault_dir, "commit", "-q", "-am", "edit one note")
        t0, c0 = time.perf_counter(), _cpu()
        inc = build_index(Vault(vault_dir), target, model=model, jobs=jobs)
        out["incremental_s"] = round(time.perf_counter() - t0, 2)
        out["incremental_cpu_s"] = round(_cpu() - c0, 2)
        out["incremental_similar_rows"] = inc.similar_rows
        out["incremental_stages"] = {k: round(v, 2) for k, v in inc.seconds.items()}
        out["incremental_note"] = note
        out["incremental_embedded_chunks"] = inc.embedded
        out["incremental_shards"] = f"{len(inc.shards_built)} built, " \
                                    f"{len(inc.shards_reused)} reused"

        md_raw, md_packed = _markdown(vault_dir, [n.path for n in Vault(vault_dir).notes])
        ix_raw, ix_packed = _size(target)
        out["markdown_mb"] = round(md_raw / 1e6, 1)
        out["index_mb"] = round(ix_raw / 1e6, 1)
        out["index_over_markdown"] = round(ix_raw / md_raw, 2)
        out["markdown_zlib_mb"] = round(md_packed / 1e6, 1)
        out["index_zlib_mb"] = round(ix_packed / 1e6, 1)
        out["index_over_markdown_zlib"] = round(ix_packed / md_packed, 2)
        by_kind: dict[str, int] = {}
        for p in target.rglob("*"):
            if p.is_file():
                kind = p.name if p.parent == target else (
                    "bm25" if p.parent.name == "bm25" else p.name)
                by_kind[kind] = by_kind.get(kind, 0) + p.stat().st_size
        out["index_mb_by_file"] = {k: round(v / 1e6, 1) for k, v in sorted(by_kind.items())}
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    out["peak_rss_workers_mb"] = round(
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.index_build")
    p.add_argument("--vault", choices=["gen10k", "tldr"], action="append")
    p.add_argument("--model", type=Path, default=MODEL if MODEL.is_dir() else None)
    p.add_argument("--no-model", action="store_true")
    p.add_argument("--jobs", type=int, default=None)
    p.add_argument("--dim", type=int, default=None, help="embeddings.dim for the run")
    p.add_argument("--shard-max-bytes", type=int, default=None,
                   help="index.shard_max_bytes for the run")
    p.add_argument("--one", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    model = None if args.no_model else args.model
    config = ""
    if args.dim:
        config += f"embeddings:\n  dim: {args.dim}\n"
    if args.shard_max_bytes:
        config += f"index:\n  shard_max_bytes: {args.shard_max_bytes}\n"
    if args.one:  # a child run: one vault, so peak RSS is that vault's
        print(json.dumps(one(args.one, model, args.jobs, config)))
        return 0
    vaults = args.vault or ["gen10k", "tldr"]
    print(f"load average before: {os.getloadavg()[0]:.2f}; cores: {os.cpu_count()}")
    for name in vaults:
        if name == "tldr" and not TLDR.is_dir():
            print("tldr: skipped (../shared/corpora/tldr-pages absent)")
            continue
        cmd = [sys.executable, "-m", "bench.index_build", "--one", name]
        cmd += ["--no-model"] if model is None else ["--model", str(model)]
        cmd += ["--jobs", str(args.jobs)] if args.jobs else []
        cmd += ["--dim", str(args.dim)] if args.dim else []
        cmd += ["--shard-max-bytes", str(args.shard_max_bytes)] if args.shard_max_bytes else []
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True)
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        for key, value in result.items():
            print(f"{name:7s} {key:26s} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
