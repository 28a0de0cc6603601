"""Speed of one model tier on the generated vault: `python -m bench.tiers --model FOLDER
[--vault DIR] [--index DIR] [--runs N] [--embed N]`.

Prints, with the load average before and after each figure (the machine is shared):
- embedding throughput: N chunk texts of the vault (paragraph chunks, as a build embeds
  them) through the model in two forked worker processes of one thread each, which is
  what `kbase index` runs on two cores: chunks per second of wall time;
- the full build (`kbase index --model FOLDER`, whole process, cold parse cache) and the
  index size against the vault's Markdown, unless `--index` names one already built;
- whole-process `kbase search` from a fresh clone that has the index only on
  `origin/kbase-index` (bench/queries.py: first query, BM25, hybrid);
- warm MCP round trips (bench/mcp_speed.py) with the same model.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import queries
from bench.mcp_speed import GEN10K

_texts: list[str] = []
_model: list[Any] = []


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def chunk_texts(vault: Path, n: int) -> list[str]:
    """The embedding texts of the vault's first chunks, in path order, until `n`."""
    from kbase_ci.index.chunks import chunk_note, embed_text
    from kbase_ci.parse.parser import parse_note

    out: list[str] = []
    for path in sorted(p for p in vault.rglob("*.md") if ".git" not in p.parts):
        data = path.read_bytes()
        note = parse_note(path.relative_to(vault).as_posix(), data)
        out.extend(embed_text(note.title, c) for c in chunk_note(note, data))
        if len(out) >= n:
            break
    return out[:n]


def _embed(part: int) -> int:
    texts = _texts[part::2]
    _model[0].encode(texts)
    return len(texts)


def throughput(model: Path, texts: list[str]) -> float:
    """Chunks per second of wall time, two forked workers of one thread each."""
    from kbase_ci.index.modelfolder import open_embedder
    from kbase_ci.state.threads import one_blas_thread

    _texts[:] = texts
    _model[:] = [open_embedder(model)]
    _model[0].encode(texts[:8])  # warm-up: first-call allocations
    ctx = multiprocessing.get_context("fork")
    t0 = time.perf_counter()
    with ctx.Pool(2, initializer=one_blas_thread) as pool:
        done = sum(pool.map(_embed, [0, 1]))
    return done / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--vault", type=Path, default=GEN10K)
    ap.add_argument("--index", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--embed", type=int, default=4000)
    ap.add_argument("--query", default="replica consistency")
    ap.add_argument("--skip-mcp", action="store_true")
    args = ap.parse_args()
    print("command: python -m bench.tiers " + " ".join(sys.argv[1:]), flush=True)
    if args.embed:
        texts = chunk_texts(args.vault, args.embed)
        before = load()
        rate = throughput(args.model, texts)
        print(f"embedding: {rate:.0f} chunks/s ({len(texts)} chunks, mean "
              f"{sum(map(len, texts)) / len(texts):.0f} characters; 2 workers x 1 thread; "
              f"{before} -> {load()})", flush=True)
    with tempfile.TemporaryDirectory(prefix="kbase-tiers-") as tmp:
        index = args.index
        if index is None:
            index = Path(tmp) / "index"
            before = load()
            t0 = time.perf_counter()
            queries.build(args.vault, index, args.model)
            wall = time.perf_counter() - t0
            size = sum(p.stat().st_size for p in index.rglob("*") if p.is_file())
            md = int(subprocess.run(
                [sys.executable, "-c", "import json,sys; print(json.load(open(sys.argv[1]))"
                 "['counts']['markdown_bytes'])", str(index / "manifest.json")],
                capture_output=True, text=True, check=True).stdout)
            print(f"full build: {wall:.1f} s; index {size / 1e6:.1f} MB = {size / md:.2f}x "
                  f"the Markdown ({md / 1e6:.1f} MB) ({before} -> {load()})", flush=True)
        before = load()
        figs, notes = queries.measure(args.vault, index, args.runs, args.model, args.query,
                                      "Home")
        for f in figs:
            print(f"{f['name']}: median {f['median']:.0f} ms (min {f['min']:.0f}, max "
                  f"{f['max']:.0f}, n={f['n']})", flush=True)
        print(f"  ({before} -> {load()}) {' '.join(notes)}", flush=True)
        if not args.skip_mcp:
            before = load()
            subprocess.run([sys.executable, "-m", "bench.mcp_speed", "--vault",
                            str(args.vault), "--index", str(index), "--model",
                            str(args.model), "--runs", str(max(10, 6 * args.runs))],
                           check=True)
            print(f"  ({before} -> {load()})", flush=True)


if __name__ == "__main__":
    main()
