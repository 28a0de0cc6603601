"""Where the transformer tier's build time goes, and the most this machine can do:
`python -m bench.transformer_cost [--vaults A,B] [--model DIR] [--encode]`.

Issue 32 asks for >= 250 chunks/s on 2 cores. This bench separates what kbase could
change from what the model costs:

1. The model alone (one onnxruntime thread, seeded random token ids): CPU per call for a
   grid of batch sizes and sequence lengths, per token. When the cost per token does
   not fall with the batch, batching cannot buy throughput on this CPU (and with an
   int8 export, whose activation scales are per batch, it would make a chunk's vector
   depend on its neighbours).
2. Per shared vault: the token lengths of the texts `kbase index` embeds (the chunker
   and tokenizer of the product, truncation at the model's limit), the share of tokens
   and chunks a shorter truncation would cut, and, with `--encode`, the CPU seconds the
   product's embedder needs for the vault's distinct texts: chunks per CPU second, and
   twice that as the bound on 2 idle cores (the build does more than embed).
CPU seconds are used because the machine is shared; they move far less with its load
than wall time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
MODEL = SHARED / "models" / "minilm-l6-onnx"
VAULTS = ("obsidian-tasks-docs", "data-engineering-wiki", "dnd-5e-srd")
GRID = ((1, 16), (1, 48), (1, 128), (1, 256), (8, 48), (32, 48), (32, 16))
CUTS = (192, 128, 96, 64)


def model_grid(model: Path) -> list[str]:
    import numpy as np
    import onnxruntime as ort

    from kbase_ci.index.transformer import onnx_file

    path = onnx_file(model)
    if path is None:
        sys.exit(f"{model}: no ONNX model")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    rng = np.random.default_rng(0)
    rows = ["| batch | tokens | ms per call | ms per token | texts per CPU s |",
            "| --- | --- | --- | --- | --- |"]
    for batch, length in GRID:
        ids = rng.integers(1000, 20000, size=(batch, length)).astype(np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids)}
        feed = {k: v for k, v in feed.items() if k in names}
        session.run(None, feed)
        reps = 20 if batch * length < 2000 else 5
        start = time.process_time()
        for _ in range(reps):
            session.run(None, feed)
        per_call = (time.process_time() - start) / reps
        rows.append(f"| {batch} | {length} | {per_call * 1000:.2f} | "
                    f"{per_call * 1000 / (batch * length):.3f} | {batch / per_call:.1f} |")
    return rows


def texts_of(vault: str) -> list[str]:
    from kbase_ci.index.chunks import chunk_note, embed_text
    from kbase_ci.parse.parser import parse_note

    root = SHARED / "corpora" / vault / "vault"
    out: list[str] = []
    for path in sorted(root.rglob("*.md")):
        data = path.read_bytes()
        note = parse_note(path.relative_to(root).as_posix(), data)
        out += [embed_text(note.title, c) for c in chunk_note(note, data)]
    return out


def vault_row(vault: str, model: Path, encode: bool) -> list[str]:
    from tokenizers import Tokenizer

    from kbase_ci.index.transformer import TransformerEmbedder, max_tokens

    texts = texts_of(vault)
    limit = max_tokens(model)
    tok = Tokenizer.from_file(str(model / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(limit)
    lens = sorted(len(tok.encode(t).ids) for t in texts)
    total = sum(lens)
    n = len(lens)
    cut = ", ".join(f"{c}: {sum(min(x, c) for x in lens) / total:.0%} of tokens, "
                    f"{sum(x > c for x in lens) / n:.1%} of chunks cut" for c in CUTS)
    row = [f"{vault}: {n} chunks, tokens mean {statistics.fmean(lens):.1f}, p50 "
           f"{lens[n // 2]}, p90 {lens[int(n * 0.9)]}, p99 {lens[int(n * 0.99)]} "
           f"(truncation {limit}); truncation {cut}"]
    if encode:
        distinct = sorted(set(texts))
        embedder = TransformerEmbedder(model)
        start = time.process_time()
        embedder.encode(distinct)
        cpu = time.process_time() - start
        row.append(f"{vault}: {len(distinct)} distinct texts encoded in {cpu:.1f} CPU s: "
                   f"{n / cpu:.1f} chunks per CPU s, at most {2 * n / cpu:.0f} chunks/s "
                   f"on 2 idle cores (embedding alone)")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=MODEL)
    ap.add_argument("--vaults", default=",".join(VAULTS))
    ap.add_argument("--encode", action="store_true",
                    help="also time the product's embedder on each vault's texts")
    args = ap.parse_args()
    if not args.model.is_dir():
        sys.exit(f"{args.model}: not here (../shared is needed)")
    print("\n".join(model_grid(args.model)))
    for vault in filter(None, args.vaults.split(",")):
        print("\n".join(vault_row(vault, args.model, args.encode)))


if __name__ == "__main__":
    main()
