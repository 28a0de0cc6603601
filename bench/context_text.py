"""How much of `kbase context`'s JSON is note text:
`python -m bench.context_text [--work DIR] [--vaults A,B] [--queries N] [--max-tokens N]`.

For the first N questions (default 20) of each shared vault's natural-language set
(../shared/corpora/qa/natural-VAULT.jsonl), runs `context --query Q --max-tokens 2000`
in-process (the CLI prints the same compact JSON) and prints, per vault, the share of the
JSON's characters that are note text (the notes' `text` strings as printed: median and
worst), the tokens the JSON costs (kbase_ci.query.payload.cost: never above the
budget), the share of those tokens the traversal metadata costs (`link_traversal` and
`metadata`: median and most), and how often a note the set names as an answer is in the
bundle with text.
Each vault is copied into a scratch git repository under `--work` and indexed once with
the static model (the same folders as bench.query_quality).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

VAULTS = ("obsidian-tasks-docs", "data-engineering-wiki", "dnd-5e-srd")


def text_share(answer: dict[str, Any]) -> tuple[float, str]:
    """(note text's share of the compact JSON's characters, that JSON)."""
    from kbase_ci.query.payload import dumps

    printed = dumps(answer)
    text = sum(len(dumps({"t": n["text"]})) - len('{"t":""}') for n in answer["notes"])
    return text / len(printed), printed


def measure(view: Any, rows: list[dict[str, Any]], max_tokens: int) -> dict[str, Any]:
    from kbase_ci.query.context import context_answer
    from kbase_ci.query.payload import cost, dumps

    shares, costs, meta, found = [], [], [], 0
    for row in rows:
        answer = context_answer(view, query=row["query"], max_tokens=max_tokens).to_json()
        share, printed = text_share(answer)
        shares.append(share)
        costs.append(cost(printed))
        meta.append(cost(dumps({k: answer[k] for k in ("link_traversal", "metadata")}))
                    / costs[-1])
        found += any(n["path"] in row["answers"] and n["text"] for n in answer["notes"])
    return {"n": len(rows), "median": statistics.median(shares), "worst": min(shares),
            "max_cost": max(costs), "meta_median": statistics.median(meta),
            "meta_max": max(meta), "answer_with_text": found / len(rows)}


def main() -> None:
    from bench.query_quality import QA, _view

    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--vaults", default=",".join(VAULTS))
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--max-tokens", type=int, default=2000)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kbase-context-"))
    work.mkdir(parents=True, exist_ok=True)
    for vault in args.vaults.split(","):
        lines = (QA / f"natural-{vault}.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()][:args.queries]
        got = measure(_view(vault, work), rows, args.max_tokens)
        print(f"{vault:24} n={got['n']} note text share: median {got['median']:.3f} "
              f"worst {got['worst']:.3f}; JSON cost max {got['max_cost']}/{args.max_tokens}; "
              f"metadata {got['meta_median']:.3f} (most {got['meta_max']:.3f}); "
              f"an answer note with text {got['answer_with_text']:.2f}", flush=True)


if __name__ == "__main__":
    main()
