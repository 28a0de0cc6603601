"""What kbase's transformer embedder costs over raw onnxruntime on the same texts:

    python -m bench.embed_overhead [--vaults A,B] [--model DIR] [--rounds 5] [--limit N]

The texts are a shared vault's distinct chunk texts as `kbase index` embeds them (the
product's parser, chunker and `embed_text`), in the build's pieces of 256. Two child
processes take turns (A B A B ...), each loading the model and embedding every piece:

- `kbase`: `open_embedder(model)` (the fenced `TransformerEmbedder` a build uses), one
  `encode(piece)` per piece;
- `raw`: what anyone would write with the same libraries: `tokenizers` with the model's
  truncation, one onnxruntime session (one intra-op thread, spinning off, sequential),
  per text `session.run` on its token ids, mean pooling, normalisation; float32 throughout.

Each child reports the CPU seconds (`time.process_time`: every thread of the process) of
its embedding loop alone, and the parent prints the median per side, the pair ratios
kbase/raw (median, range), the load average before and after, and the largest difference
between the two sides' unit vectors (both must embed the same texts the same way).
Also, with `--threads`, raw onnxruntime's own cost of 2 intra-op threads with spinning on
and off against 1 thread (the setting a build uses).

With `--build [--vs TREE]`, the whole build instead: `kbase index --model MODEL` from
nothing (parse cache warm, 2 worker processes: what a push builds) of this tree (and of
TREE, e.g. a checkout of e1fd72d), the same build without a model (`KBASE_OFFLINE=1`, no
`.kbase.yml`: BM25 only), and raw onnxruntime on the vault's distinct texts (model load
included), in turn, whole-process CPU (`os.wait4`). The embedding share of a build is its
CPU minus the build without a model; printed over raw onnxruntime's, per round (median,
range). Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.figure import process_cpu
from bench.machine import load
from bench.workloads import ROOT, SHARED

MODEL = SHARED / "models" / "minilm-l6-onnx"
VAULTS = ("dnd-5e-srd", "vaultofknowledge", "dendron-site", "data-engineering-wiki",
          "obsidian-tasks-docs")
PIECE = 256


def texts_of(vault: str, limit: int | None) -> list[str]:
    from kbase_ci.index.chunks import chunk_note, embed_text
    from kbase_ci.parse.parser import parse_note

    root = SHARED / "corpora" / vault / "vault"
    seen: dict[str, None] = {}
    for path in sorted(root.rglob("*.md")):
        data = path.read_bytes()
        note = parse_note(path.relative_to(root).as_posix(), data)
        for c in chunk_note(note, data):
            seen.setdefault(embed_text(note.title, c))
    texts = list(seen)
    return texts[:limit] if limit else texts


def _kbase(model: Path, pieces: list[list[str]]) -> tuple[float, Any]:
    import numpy as np

    from kbase_ci.index.modelfolder import open_embedder

    emb = open_embedder(model)
    t0 = time.process_time()
    out = [emb.encode(p) for p in pieces]
    return time.process_time() - t0, np.concatenate(out)


def _raw(model: Path, pieces: list[list[str]], threads: int = 1,
         spinning: bool = False) -> tuple[float, Any]:
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from kbase_ci.index.transformer import max_tokens, onnx_file

    tok = Tokenizer.from_file(str(model / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_tokens(model))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    session = ort.InferenceSession(str(onnx_file(model)), opts,
                                   providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    t0 = time.process_time()
    rows = []
    for piece in pieces:
        for text in piece:
            enc = tok.encode(text)
            ids = np.array([enc.ids], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                    "token_type_ids": np.zeros_like(ids)}
            out = session.run(None, {k: v for k, v in feed.items() if k in names})[0]
            v = out[0].mean(axis=0)
            rows.append(v / np.linalg.norm(v))
    return time.process_time() - t0, np.stack(rows)


def child(side: str, model: Path, vault: str, limit: int | None) -> None:
    import numpy as np

    texts = texts_of(vault, limit)
    pieces = [texts[i:i + PIECE] for i in range(0, len(texts), PIECE)]
    if side == "kbase":
        cpu, vecs = _kbase(model, pieces)
    else:
        threads, _, spin = side.partition(":")
        cpu, vecs = _raw(model, pieces, int(threads.removeprefix("raw") or 1), spin == "spin")
    np.save(f"/tmp/kbase-embed-overhead-{side}.npy", vecs.astype(np.float32))
    print(json.dumps({"cpu": cpu, "texts": len(texts),
                      "tokens": sum(len(t) for t in texts)}))


def _pair(sides: list[str], args: argparse.Namespace, vault: str) -> dict[str, list[float]]:
    got: dict[str, list[float]] = {s: [] for s in sides}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    for _ in range(args.rounds):
        for side in sides:
            cmd = [sys.executable, "-m", "bench.embed_overhead", "--child", side,
                   "--model", str(args.model), "--vaults", vault]
            if args.limit:
                cmd += ["--limit", str(args.limit)]
            proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                                  check=True)
            got[side].append(json.loads(proc.stdout.strip().splitlines()[-1])["cpu"])
    return got


def _raw_whole(model: Path, vault: str) -> None:
    """Child: load the model, embed the vault's distinct texts (whole-process CPU)."""
    texts = texts_of(vault, None)
    _raw(model, [texts[i:i + PIECE] for i in range(0, len(texts), PIECE)])


def build_rounds(args: argparse.Namespace, vault: str) -> None:
    import shutil

    from bench.workloads import git_copy

    work = Path(f"/tmp/kbase-bench/embed-build/{vault}")
    shutil.rmtree(work, ignore_errors=True)
    repo = git_copy(SHARED / "corpora" / vault / "vault", work / "vault")
    trees = [("this", ROOT)] + [(f"vs:{Path(t).name}", Path(t).resolve()) for t in args.vs]
    base_env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                "KBASE_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    index = [sys.executable, "-m", "kbase_ci", "index"]
    raw_cmd = [sys.executable, "-m", "bench.embed_overhead", "--raw-whole", "--model",
               str(args.model), "--vaults", vault]
    got: dict[str, list[float]] = {name: [] for name, _ in trees}
    got.update(none=[], raw=[])
    before = load()
    for r in range(args.rounds + 1):  # the first round warms the parse cache: not counted
        for name, tree in trees:
            env = {**base_env, "PYTHONPATH": str(tree)}
            shutil.rmtree(work / "out", ignore_errors=True)
            cpu = process_cpu([*index, "--model", str(args.model), "--out", str(work / "out")],
                              repo, env)
            if r:
                got[name].append(cpu)
            shutil.rmtree(work / f"out-{tree.name}", ignore_errors=True)
            (work / "out").rename(work / f"out-{tree.name}")
        shutil.rmtree(work / "out", ignore_errors=True)
        cpu = process_cpu([*index, "--out", str(work / "out")], repo,
                          {**base_env, "PYTHONPATH": str(ROOT)})
        raw = process_cpu(raw_cmd, ROOT, {**os.environ, "PYTHONPATH": str(ROOT)})
        if r:
            got["none"].append(cpu)
            got["raw"].append(raw)
    print(f"{vault} (load {' '.join(map(str, before))} -> "
          f"{' '.join(map(str, load()))}, {args.rounds} rounds):")
    for name, _ in trees:
        share = [(a - b) / c for a, b, c in zip(got[name], got["none"], got["raw"], strict=True)]
        print(f"  {name}: build {statistics.median(got[name]):.1f} s CPU, without a model "
              f"{statistics.median(got['none']):.1f} s, raw onnxruntime on the distinct "
              f"texts {statistics.median(got['raw']):.1f} s; embedding share / raw: median "
              f"{statistics.median(share):.3f} ({min(share):.3f}-{max(share):.3f})")
    files = [{p.relative_to(work / f"out-{t.name}").as_posix(): p.read_bytes()
              for p in sorted((work / f"out-{t.name}").rglob("*")) if p.is_file()}
             for _, t in trees]
    print("  the trees' indexes: " + ("identical" if all(f == files[0] for f in files)
                                      else "DIFFER"))
    if len(trees) > 1:
        print("  " + _line("this / " + trees[1][0] + " whole build", got["this"],
                           got[trees[1][0]]))


def _line(name: str, a: list[float], b: list[float]) -> str:
    ratios = [x / y for x, y in zip(a, b, strict=True)]
    return (f"{name}: {statistics.median(a):.2f} s vs {statistics.median(b):.2f} s CPU, pair "
            f"ratio median {statistics.median(ratios):.3f} ({min(ratios):.3f}-"
            f"{max(ratios):.3f}, n={len(ratios)})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--vaults", default=",".join(VAULTS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--limit", type=int, default=None, help="first N distinct texts only")
    ap.add_argument("--threads", action="store_true",
                    help="also raw onnxruntime with 2 threads, spinning on and off")
    ap.add_argument("--build", action="store_true", help="whole builds instead (above)")
    ap.add_argument("--vs", action="append", default=[], metavar="TREE")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--raw-whole", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.model, args.vaults, args.limit)
        return 0
    if args.raw_whole:
        _raw_whole(args.model, args.vaults)
        return 0
    if not args.model.is_dir():
        print(f"{args.model}: not here (../shared is needed)")
        return 0
    import numpy as np

    for vault in filter(None, args.vaults.split(",")):
        if args.build:
            build_rounds(args, vault)
            continue
        before = load()
        got = _pair(["kbase", "raw"], args, vault)
        a = np.load("/tmp/kbase-embed-overhead-kbase.npy")
        b = np.load("/tmp/kbase-embed-overhead-raw.npy")
        print(f"{vault} ({len(a)} distinct texts, load {' '.join(map(str, before))} -> "
              f"{' '.join(map(str, load()))}):")
        print("  " + _line("kbase / raw onnxruntime", got["kbase"], got["raw"])
              + f"; largest component difference {float(np.abs(a - b).max()):.2e}")
        if args.threads:
            more = _pair(["raw2:spin", "raw2:nospin", "raw1"], args, vault)
            print("  " + _line("raw, 2 threads spinning / 1 thread", more["raw2:spin"],
                               more["raw1"]))
            print("  " + _line("raw, 2 threads no spinning / 1 thread", more["raw2:nospin"],
                               more["raw1"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
