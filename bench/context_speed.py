"""`kbase context` speed on the generated 10k-note vault, and the token estimator's error.

    python -m bench.context_speed [--vault DIR] [--index DIR] [--runs N]
    python -m bench.context_speed --estimator   # needs `pip install bpe-openai`

Speed: works on a scratch copy of the vault (`git clone`), with `--index DIR` or, when
that is missing or of an older format, an index built there first (with the real model
when ../shared/models has it). Prints:
- whole-process wall and CPU time (median of N) of
  `kbase context NOTE --depth standard --max-tokens 8000 --index DIR` (target < 300 ms);
- in-process times on an already-open view: building the link graph once, then
  `context_answer` per note, strategy and depth (the part this command adds; a long-lived
  server such as `kbase mcp` pays the graph once).

Estimator: `estimate_tokens` against real BPE encodings (cl100k_base, o200k_base, as
shipped inside the bpe-openai package, so no download) on the shared corpora: overall
ratio estimate/real and the lowest ratio of any file (below 1.0 would be an undercount).
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GEN10K = Path("/tmp/kbase-bench/gen10k")
INDEX10K = Path("/tmp/kbase-bench/idx10k")
SHARED = ROOT.parent / "shared"
MODEL = SHARED / "models" / "minilm-static-256"
NOTES = ("Advanced B-Tree Recipes", "Home", "Databases/Databases.md")
KBASE = [sys.executable, "-m", "kbase_ci"]


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, cpu) seconds of one subprocess."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cpu0, t0 = _child_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False, env=env)
    wall, cpu = time.perf_counter() - t0, _child_cpu() - cpu0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-800:]}")
    return wall, cpu


def _index_ok(index: Path) -> bool:
    from kbase_ci.errors import KbaseError
    from kbase_ci.index.reader import open_index

    try:
        open_index(index)
    except (KbaseError, OSError):
        return False
    return True


def _in_process(vault_dir: Path, index: Path, runs: int) -> None:
    from kbase_ci.query.context import context_answer
    from kbase_ci.query.discovery import open_source
    from kbase_ci.query.traverse import view_graph
    from kbase_ci.query.view import QueryView
    from kbase_ci.vault.notefiles import Vault

    t0 = time.perf_counter()
    vault = Vault(vault_dir)
    view = QueryView(vault, open_source(vault, index))
    t1 = time.perf_counter()
    c0 = time.process_time()
    view_graph(view)
    print(f"open view {1000 * (t1 - t0):.0f} ms; link graph (once per view) "
          f"{1000 * (time.perf_counter() - t1):.0f} ms wall "
          f"{1000 * (time.process_time() - c0):.0f} ms cpu")
    cases: list[dict[str, Any]] = [{"note": n} for n in NOTES]
    cases += [{"note": NOTES[0], "strategy": "importance", "depth": "deep"},
              {"note": NOTES[0], "strategy": "tags"},
              {"query": "replica consistency"}]
    for case in cases:
        walls, cpus = [], []
        for _ in range(runs):
            c0, t0 = time.process_time(), time.perf_counter()
            ans = context_answer(view, max_tokens=8000, **case)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        print(f"context_answer {case}: {1000 * statistics.median(walls):.0f} ms wall "
              f"{1000 * statistics.median(cpus):.0f} ms cpu; {len(ans.notes)} notes, "
              f"{ans.tokens} tokens, {len(ans.left_out)} left out")


def speed(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="kbase-ctxspeed-"))
    try:
        vault = work / "vault"
        subprocess.run(["git", "clone", "-q", str(args.vault), str(vault)], check=True)
        index = args.index
        if index is None or not _index_ok(index):
            index = work / "index"
            model = ["--model", str(MODEL)] if MODEL.is_dir() else []
            print(f"building an index in {index} (the given one is missing or old) ...")
            wall, cpu = _run([*KBASE, "index", "--out", str(index), *model], vault)
            print(f"  built in {wall:.1f} s wall {cpu:.1f} s cpu")
        for note in NOTES[:2]:
            cmd = [*KBASE, "context", note, "--depth", "standard", "--max-tokens", "8000",
                   "--index", str(index)]
            _run(cmd, vault)  # warm the page cache
            got = [_run(cmd, vault) for _ in range(args.runs)]
            print(f"kbase context {note!r} --depth standard --max-tokens 8000 --index "
                  f"DIR: {1000 * statistics.median(w for w, _ in got):.0f} ms wall "
                  f"{1000 * statistics.median(c for _, c in got):.0f} ms cpu "
                  f"(median of {args.runs}; target < 300 ms)")
        _in_process(vault, index, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def estimator() -> None:
    try:
        import bpe_openai  # type: ignore[import-not-found]
    except ImportError:
        raise SystemExit("needs bpe-openai (BPE tables inside the wheel): "
                         "pip install bpe-openai, in a scratch venv") from None
    from kbase_ci.query.budget import estimate_tokens

    encodings = {n: bpe_openai.get_encoding(n) for n in ("cl100k_base", "o200k_base")}
    corpora = SHARED / "corpora"
    rnd = random.Random(1)
    sets = {"data-engineering-wiki": "data-engineering-wiki/vault/**/*.md",
            "obsidian-tasks-docs": "obsidian-tasks-docs/vault/**/*.md",
            "dnd-5e-srd": "dnd-5e-srd/vault/**/*.md",
            **{f"tldr {lang}": f"tldr-pages/vault/pages{lang}/**/*.md"
               for lang in ("", ".de", ".ru", ".zh", ".ja", ".ko", ".hi", ".th", ".ar")}}
    for name, pattern in sets.items():
        files = sorted(glob.glob(str(corpora / pattern), recursive=True))
        rnd.shuffle(files)
        texts = [Path(f).read_text(encoding="utf-8", errors="replace") for f in files[:200]]
        texts = [t for t in texts if t.strip()]
        if not texts:
            continue
        est = [estimate_tokens(t) for t in texts]
        line = f"{name:22s} {len(texts):3d} files"
        for enc_name, enc in encodings.items():
            real = [len(enc.encode(t)) for t in texts]
            worst = min(e / r for e, r in zip(est, real, strict=True) if r)
            line += f"  {enc_name}: {sum(est) / sum(real):.2f}x (lowest {worst:.2f})"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, default=GEN10K)
    ap.add_argument("--index", type=Path, default=INDEX10K if INDEX10K.is_dir() else None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--estimator", action="store_true",
                    help="measure the token estimator against real BPE instead")
    args = ap.parse_args()
    if args.estimator:
        estimator()
    else:
        speed(args)


if __name__ == "__main__":
    main()
