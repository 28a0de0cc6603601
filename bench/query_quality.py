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
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
QA = SHARED / "corpora" / "qa"
MODEL = SHARED / "models" / "minilm-static-256"
TIERS = {"static": MODEL, "transformer": SHARED / "models" / "minilm-l6-onnx"}
MODES = ("bm25", "semantic", "hybrid")
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@kbase.invalid",
        "-c", "commit.gpgsign=false", "-c", "gc.auto=0"]


def _repo(corpus: str, work: Path) -> Path:
    repo = work / corpus
    if not repo.is_dir():
        shutil.copytree(SHARED / "corpora" / corpus / "vault", repo)
        subprocess.run([*_GIT, "init", "-q"], cwd=repo, check=True)
        subprocess.run([*_GIT, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*_GIT, "commit", "-qm", "corpus"], cwd=repo, check=True)
    return repo


def _view(corpus: str, work: Path, model: Path = MODEL) -> Any:
    from kbase_ci.index.indexbuild import build_index
    from kbase_ci.index.reader import open_index
    from kbase_ci.query.discovery import IndexSource
    from kbase_ci.query.view import QueryView
    from kbase_ci.vault.notefiles import Vault

    vault = Vault(_repo(corpus, work))
    out = work / f"{corpus}-index-{model.name}"
    build_index(vault, out, model=model)
    return QueryView(vault, IndexSource(open_index(out), "dir", str(out)))


def _metrics(ranked: list[str], answers: set[str]) -> tuple[float, float, float]:
    recall5 = float(any(p in answers for p in ranked[:5]))
    mrr = next((1.0 / i for i, p in enumerate(ranked[:10], 1) if p in answers), 0.0)
    dcg = sum(1.0 / math.log2(i + 1) for i, p in enumerate(ranked[:10], 1) if p in answers)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(answers), 10) + 1))
    return recall5, mrr, dcg / ideal if ideal else 0.0


def scores(view: Any, rows: list[dict[str, Any]], modes: tuple[str, ...] = MODES,
           model: Path = MODEL) -> list[dict[str, Any]]:
    """Mean recall@5, MRR@10 and nDCG@10 per query kind and mode (sorted by kind, mode)."""
    from kbase_ci.query.search import Searcher, search_answer

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
                m = _metrics([x.path for x in ans.results], set(r["answers"]))
                sums = [a + b for a, b in zip(sums, m, strict=True)]
            n = len(items)
            out.append({"kind": kind, "mode": mode, "n": n, "recall@5": sums[0] / n,
                        "mrr@10": sums[1] / n, "ndcg@10": sums[2] / n})
    return out


def _load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def tldr_hard(n: int) -> list[dict[str, Any]]:
    rows = [r for r in _load(QA / "tldr-en.jsonl") if r["kind"] == "example"
            and r.get("unique") and not r.get("mentions_command")]
    return random.Random(0).sample(rows, min(n, len(rows)))


def tldr_xlang(n: int) -> list[dict[str, Any]]:
    rows = random.Random(0).sample(_load(QA / "tldr-xlang.jsonl"), n)
    return ([{**r, "kind": "translated -> same-language page"} for r in rows]
            + [{**r, "kind": "translated -> English page", "answers": r["en_answers"]}
               for r in rows if r.get("en_answers")])


def plan(args: argparse.Namespace) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(corpus, set label, rows) to evaluate."""
    out: list[tuple[str, str, list[dict[str, Any]]]] = []
    for name in args.sets:
        out.append((name, name, _load(QA / f"{name}.jsonl")))
        for extra in args.extra:
            rows = _load(extra)
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
                    got += _whole(got)
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


def _whole(got: list[dict[str, Any]]) -> list[dict[str, Any]]:
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
