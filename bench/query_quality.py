"""Retrieval quality, both model tiers side by side:
`python -m bench.query_quality [--sets NAME...] [--tldr N] [--xlang N] [--tiers static,transformer]
[--extra FILE.jsonl...] [--json OUT]`.

recall@5, MRR@10 and nDCG@10 (binary relevance: any listed answer counts) of `bm25`,
`semantic` and `hybrid` search on the known-answer sets in ../shared/corpora/qa/ (see its
README) with ../shared/models/minilm-static-256 (static tier) and
../shared/models/minilm-l6-onnx (transformer tier). Each corpus is copied into a scratch
git repo and indexed once per tier with the real `kbase index` code; queries run
in-process through the same `search_answer` the command uses. `--tldr N` adds N queries
(seed 0) of the harder tldr subset (kind example, unique, not mentioning the command),
and the first 100 of them as their own line; `--xlang N` the cross-language set (the
translated page, then the English page, as answer). `--extra` adds sets in the same
format (our paraphrased questions in fixtures/query/). The last lines say, per set and
tier, hybrid's MRR@10 minus the better single ranker's (the issue allows -0.005).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bench.workloads import CORPORA, MODEL, QA, SHARED, git_copy

TIERS = {"static": MODEL, "transformer": SHARED / "models" / "minilm-l6-onnx"}
MODES = ("bm25", "semantic", "hybrid")


def _repo(corpus: str, work: Path) -> Path:
    repo = work / corpus
    if not repo.is_dir():
        git_copy(CORPORA / corpus / "vault", repo)
    return repo


def _view(corpus: str, work: Path, model: Path = MODEL) -> Any:
    from kbase_ci.index.indexbuild import build_index
    from kbase_ci.query.view import QueryView
    from kbase_ci.scope.source import open_index_source
    from kbase_ci.vault.notefiles import Vault

    vault = Vault(_repo(corpus, work))
    out = work / f"{corpus}-index-{model.name}"
    build_index(vault, out, model=model)
    return QueryView(vault, open_index_source(vault, out))


def ndcg(ranked: list[str], answers: Iterable[str], k: int = 10) -> float:
    """nDCG@k with binary relevance: any listed answer counts."""
    want = set(answers)
    dcg = sum(1.0 / math.log2(i + 1) for i, p in enumerate(ranked[:k], 1) if p in want)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(want), k) + 1))
    return dcg / ideal if ideal else 0.0


def metrics(ranked: list[str], answers: set[str]) -> tuple[float, float, float]:
    """recall@5, MRR@10 and nDCG@10 of one ranking."""
    recall5 = float(any(p in answers for p in ranked[:5]))
    mrr = next((1.0 / i for i, p in enumerate(ranked[:10], 1) if p in answers), 0.0)
    return recall5, mrr, ndcg(ranked, answers)


def scores(view: Any, rows: list[dict[str, Any]], modes: tuple[str, ...] = MODES,
           model: Path = MODEL) -> list[dict[str, Any]]:
    """Mean recall@5, MRR@10 and nDCG@10 per query kind and mode (sorted by kind, mode)."""
    from kbase_ci.query.search import search_answer
    from kbase_ci.query.searcher import Searcher

    # One loaded model for every query, as a long-lived server keeps it (loading it per
    # query would dominate the run time).
    embedder = Searcher(view, model).embedder()[0]
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["kind"]].append(r)
    out: list[dict[str, Any]] = []
    for kind, items in sorted(groups.items()):
        for mode in modes:
            sums = [0.0, 0.0, 0.0]
            for r in items:
                # Every hit up to the limit, whatever its confidence: the ranking.
                ans = search_answer(view, r["query"], mode=mode, limit=10, concise=True,
                                    model=model, embedder=embedder)
                m = metrics([x.path for x in ans.results], set(r["answers"]))
                sums = [a + b for a, b in zip(sums, m, strict=True)]
            n = len(items)
            out.append({"kind": kind, "mode": mode, "n": n, "recall@5": sums[0] / n,
                        "mrr@10": sums[1] / n, "ndcg@10": sums[2] / n})
    return out


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    """The rows of a question set (one JSON object a line)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def hard_rows() -> list[dict[str, Any]]:
    """qa/README's harder tldr subset: examples with one answer that do not name the
    command."""
    return [r for r in load_jsonl(QA / "tldr-en.jsonl") if r["kind"] == "example"
            and r.get("unique") and not r.get("mentions_command")]


def tldr_hard(n: int) -> list[dict[str, Any]]:
    rows = hard_rows()
    return random.Random(0).sample(rows, min(n, len(rows)))


def tldr_xlang(n: int) -> list[dict[str, Any]]:
    rows = random.Random(0).sample(load_jsonl(QA / "tldr-xlang.jsonl"), n)
    return ([{**r, "kind": "translated -> same-language page"} for r in rows]
            + [{**r, "kind": "translated -> English page", "answers": r["en_answers"]}
               for r in rows if r.get("en_answers")])


def plan(args: argparse.Namespace) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(corpus, set label, rows) to evaluate."""
    out: list[tuple[str, str, list[dict[str, Any]]]] = []
    for name in args.sets:
        out.append((name, name, load_jsonl(QA / f"{name}.jsonl")))
        for extra in args.extra:
            rows = load_jsonl(extra)
            if rows and rows[0]["corpus"] == name:
                # fixtures/query/ and bench/data/ both hold paraphrases-<corpus>.jsonl
                out.append((name, f"{extra.parent.name}/{extra.stem}", rows))
    if args.tldr:
        hard = tldr_hard(args.tldr)
        out.append(("tldr-pages", f"tldr-en hard ({len(hard)})", hard))
        if len(hard) > 100:
            out.append(("tldr-pages", "tldr-en hard (100)", hard[:100]))
    if args.xlang:
        out.append(("tldr-pages", "tldr-xlang", tldr_xlang(args.xlang)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", nargs="*", default=["obsidian-tasks-docs", "data-engineering-wiki"])
    ap.add_argument("--tldr", type=int, default=0)
    ap.add_argument("--xlang", type=int, default=0)
    ap.add_argument("--extra", type=Path, action="append", default=[])
    ap.add_argument("--tiers", default="static,transformer")
    ap.add_argument("--work", type=Path, default=None,
                    help="keep the corpus copies and indexes here (default: a temp folder)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kbase-qquality-"))
    work.mkdir(parents=True, exist_ok=True)
    figures: list[dict[str, Any]] = []
    try:
        todo = plan(args)
        for tier in args.tiers.split(","):
            model = TIERS[tier]
            views: dict[str, Any] = {}
            for corpus, label, rows in todo:
                if corpus not in views:
                    views[corpus] = _view(corpus, work, model)
                got = scores(views[corpus], rows, model=model)
                if len({s["kind"] for s in got}) > 1:
                    got += whole(got)
                for s in got:
                    fig = {"set": label, "tier": tier, **s}
                    figures.append(fig)
                    print(f"{label:36} {tier:11} {s['kind']:32} n={s['n']:5} {s['mode']:8} "
                          f"recall@5={s['recall@5']:.3f} MRR@10={s['mrr@10']:.3f} "
                          f"nDCG@10={s['ndcg@10']:.3f}", flush=True)
        print()
        for (label, tier, kind), group in sorted(_by_set(figures).items()):
            mrr = {f["mode"]: f["mrr@10"] for f in group}
            best = max(mrr["bm25"], mrr["semantic"])
            print(f"{label:36} {tier:11} {kind:32} hybrid - best single = "
                  f"{mrr['hybrid'] - best:+.3f}")
        if args.json:
            args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


def whole(got: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A set's figures over all its kinds, weighted by each kind's query count."""
    out = []
    for mode in MODES:
        part = [s for s in got if s["mode"] == mode]
        n = sum(s["n"] for s in part)
        out.append({"kind": "all", "mode": mode, "n": n,
                    **{k: sum(s[k] * s["n"] for s in part) / n
                       for k in ("recall@5", "mrr@10", "ndcg@10")}})
    return out


def _by_set(figures: list[dict[str, Any]]) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    out: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for f in figures:
        out[(f["set"], f["tier"], f["kind"])].append(f)
    return out


if __name__ == "__main__":
    main()
