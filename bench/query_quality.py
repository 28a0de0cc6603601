"""Retrieval quality: `python -m bench.query_quality [--sets NAME...] [--tldr N]`.

recall@5, MRR@10 and nDCG@10 (binary relevance: any listed answer counts) of `bm25`,
`semantic` and `hybrid` search on the known-answer sets in ../shared/corpora/qa/ (see its
README), with ../shared/models/minilm-static-256. Each corpus is copied into a scratch git
repo and indexed once with the real `kbase index` code; queries run in-process through
the same `search_answer` the command uses. `--tldr N` adds N queries (seed 0) of the
harder tldr subset (kind example, unique, not mentioning the command), which needs a
38k-note index build. `--extra FILE.jsonl` adds a set in the same format (e.g. our own
paraphrased questions in fixtures/query/).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
QA = SHARED / "corpora" / "qa"
MODEL = SHARED / "models" / "minilm-static-256"
MODES = ("bm25", "semantic", "hybrid")
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@kbase.invalid",
        "-c", "commit.gpgsign=false", "-c", "gc.auto=0"]


def _view(corpus: str, work: Path) -> Any:
    from kbase_ci.index.build import build_index
    from kbase_ci.index.reader import open_index
    from kbase_ci.query.location import IndexSource
    from kbase_ci.query.view import QueryView
    from kbase_ci.vault.files import Vault

    repo = work / corpus
    shutil.copytree(SHARED / "corpora" / corpus / "vault", repo)
    subprocess.run([*_GIT, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*_GIT, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*_GIT, "commit", "-qm", "corpus"], cwd=repo, check=True)
    vault = Vault(repo)
    out = work / f"{corpus}-index"
    build_index(vault, out, model=MODEL)
    return QueryView(vault, IndexSource(open_index(out), "dir", str(out)))


def _metrics(ranked: list[str], answers: set[str]) -> tuple[float, float, float]:
    recall5 = float(any(p in answers for p in ranked[:5]))
    mrr = next((1.0 / i for i, p in enumerate(ranked[:10], 1) if p in answers), 0.0)
    dcg = sum(1.0 / math.log2(i + 1) for i, p in enumerate(ranked[:10], 1) if p in answers)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(answers), 10) + 1))
    return recall5, mrr, dcg / ideal if ideal else 0.0


def scores(view: Any, rows: list[dict[str, Any]], modes: tuple[str, ...] = MODES
           ) -> list[dict[str, Any]]:
    """Mean recall@5, MRR@10 and nDCG@10 per query kind and mode (sorted by kind, mode)."""
    from kbase_ci.query.search import Searcher, search_answer

    # One loaded model for every query, as a long-lived server keeps it (loading it per
    # query would dominate the run time).
    embedder = Searcher(view, MODEL).embedder()[0]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["kind"]].append(r)
    out: list[dict[str, Any]] = []
    for kind, items in sorted(groups.items()):
        for mode in modes:
            sums = [0.0, 0.0, 0.0]
            for r in items:
                # floor=False: the ranking's quality (bench.confidence measures the
                # floor: which hits are answers at all).
                ans = search_answer(view, r["query"], mode=mode, limit=10, concise=True,
                                    model=MODEL, embedder=embedder, floor=False)
                m = _metrics([x["path"] for x in ans["results"]], set(r["answers"]))
                sums = [a + b for a, b in zip(sums, m, strict=True)]
            n = len(items)
            out.append({"kind": kind, "mode": mode, "n": n, "recall@5": sums[0] / n,
                        "mrr@10": sums[1] / n, "ndcg@10": sums[2] / n})
    return out


def evaluate(view: Any, rows: list[dict[str, Any]], label: str) -> None:
    for s in scores(view, rows):
        print(f"{label:28} {s['kind']:18} n={s['n']:5} {s['mode']:8} "
              f"recall@5={s['recall@5']:.3f} MRR@10={s['mrr@10']:.3f} "
              f"nDCG@10={s['ndcg@10']:.3f}", flush=True)


def _load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", nargs="*", default=["obsidian-tasks-docs", "data-engineering-wiki"])
    ap.add_argument("--tldr", type=int, default=0)
    ap.add_argument("--extra", type=Path, action="append", default=[])
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kbase-qquality-"))
    try:
        for name in args.sets:
            view = _view(name, work)
            evaluate(view, _load(QA / f"{name}.jsonl"), name)
            for extra in args.extra:
                rows = _load(extra)
                if rows and rows[0]["corpus"] == name:
                    evaluate(view, rows, extra.stem)
        if args.tldr:
            rows = [r for r in _load(QA / "tldr-en.jsonl") if r["kind"] == "example"
                    and r.get("unique") and not r.get("mentions_command")]
            rows = random.Random(0).sample(rows, min(args.tldr, len(rows)))
            evaluate(_view("tldr-pages", work), rows, "tldr-en (hard subset)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
