"""Choose the hybrid fusion by measurement, on kbase's own rankings:
`python -m bench.fusion --work DIR [--tiers static,transformer] [--tldr N] [--xlang N]
[--extra FILE.jsonl...]`.

For every query of every set (bench/query_quality.py's plan: the qa sets, our paraphrase
sets, the tldr hard subset and the cross-language set), the BM25 and vector note lists
are computed once with the real `Searcher`; then each candidate fusion is applied to
them with the real `search.ranked` (fusion, then a note named by the query first), and
scored. Printed per tier: each single ranker's MRR@10 per set, then the candidates by
their worst margin over the better single ranker on any set (the issue asks for no worse
than -0.005 everywhere), with plain reciprocal-rank fusion (k = 60) for comparison. The
lists are kept in DIR, so a second run only re-scores.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench import query_quality

WEIGHTS = (0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
DEPTHS = (5, 10, 20)
STATS = (None, 30, 100)
KEEP = 300
"""Notes kept per list (a tldr query's BM25 list has thousands): fusion standardises over
the top 100 and a note below 300 in both lists never reaches the top 10."""


def collect(view: Any, rows: list[dict[str, Any]], model: Path, cache: Path
            ) -> list[dict[str, list[list[Any]]]]:
    """Per query, {ranker: [[path, score], ...]} as `Searcher` ranks notes."""
    if cache.is_file():
        got: list[dict[str, list[list[Any]]]] = json.loads(cache.read_text(encoding="utf-8"))
        if len(got) == len(rows):
            return got
    from kbase_ci.query.queryterms import QueryTerms
    from kbase_ci.query.search import Searcher

    embedder = Searcher(view, model).embedder()[0]
    out = []
    for r in rows:
        searcher = Searcher(view, model)
        q = QueryTerms.of(r["query"], searcher)
        out.append({"bm25": [[h.path, h.score] for h in searcher.bm25(q)[:KEEP]],
                    "semantic": [[h.path, h.score]
                                 for h in searcher.semantic(q, embedder)[:KEEP]]})
    cache.write_text(json.dumps(out) + "\n", encoding="utf-8")
    return out


def mrr(view: Any, rows: list[dict[str, Any]], lists: list[dict[str, list[list[Any]]]],
        block: Any, only: str | None = None) -> float:
    from kbase_ci.query.hits import ChunkHit, NoteHit
    from kbase_ci.query.queryterms import QueryTerms
    from kbase_ci.query.search import ranked

    total = 0.0
    for r, got in zip(rows, lists, strict=True):
        hits = {name: [ChunkHit(p, (), 1, 1, s) for p, s in lst] for name, lst in got.items()
                if only is None or name == only}
        if block == "rrf":
            order: list[NoteHit] = _rrf(hits)
        else:
            order = ranked(view, QueryTerms.asked(r["query"], (), {}), hits, block)[0]
        paths = [n.path for n in order[:10]]
        total += query_quality._metrics(paths, set(r["answers"]))[1]
    return total / len(rows)


def _rrf(hits: dict[str, list[Any]]) -> list[Any]:
    from kbase_ci.query.hits import ChunkHit, NoteHit

    score: dict[str, float] = {}
    for lst in hits.values():
        for rank, h in enumerate(lst, 1):
            score[h.path] = score.get(h.path, 0.0) + 1.0 / (60 + rank)
    return [NoteHit(p, s, ChunkHit(p, (), 1, 1, s))
            for p, s in sorted(score.items(), key=lambda x: (-x[1], x[0]))]


def block(weight: float, depth: int, stats: int | None = None) -> dict[str, Any]:
    return {"rankers": {"bm25": {"weight": 1.0, "depth": None, "floor": "zero"},
                        "semantic": {"weight": weight, "depth": depth, "floor": "last",
                                     "stats": stats}}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--sets", nargs="*", default=["obsidian-tasks-docs", "data-engineering-wiki"])
    ap.add_argument("--tldr", type=int, default=0)
    ap.add_argument("--xlang", type=int, default=0)
    ap.add_argument("--extra", type=Path, action="append", default=[])
    ap.add_argument("--tiers", default="static,transformer")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    plan = query_quality.plan(args)
    for tier in args.tiers.split(","):
        model = query_quality.TIERS[tier]
        views: dict[str, Any] = {}
        data = []
        for corpus, label, rows in plan:
            if corpus not in views:
                views[corpus] = query_quality._view(corpus, args.work, model)
            cache = args.work / f"lists-{tier}-{label.replace(' ', '_').replace('/', '-')}.json"
            data.append((label, views[corpus], rows, collect(views[corpus], rows, model,
                                                              cache)))
        singles = {label: (mrr(v, rows, lists, None, "bm25"),
                           mrr(v, rows, lists, None, "semantic"))
                   for label, v, rows, lists in data}
        print(f"== {tier}")
        for label, (b, s) in singles.items():
            print(f"  {label:40} bm25 {b:.3f}  semantic {s:.3f}")
        table = []
        for w in WEIGHTS:
            for d in DEPTHS:
                for st in STATS:
                    got = {label: mrr(v, rows, lists, block(w, d, st))
                           for label, v, rows, lists in data}
                    worst = min(got[k] - max(singles[k]) for k in got)
                    table.append((worst, f"z-score w={w} depth={d} stats={st}", got))
        got = {label: mrr(v, rows, lists, "rrf") for label, v, rows, lists in data}
        table.append((min(got[k] - max(singles[k]) for k in got), "RRF k=60", got))
        for worst, name, got in sorted(table, key=lambda x: -x[0]):
            mean = sum(got.values()) / len(got)
            print(f"  {name:36} worst {worst:+.3f} mean {mean:.3f}  "
                  + " ".join(f"{k[:16]}={v:.3f}" for k, v in got.items()), flush=True)


if __name__ == "__main__":
    main()
