"""Hybrid fusion chosen leaving one vault out: `python -m bench.fusion_fit [--work DIR]
[--tiers static,transformer] [--vaults ...] [--cache DIR]`.

For every answerable question of bench/search_targets.py (the natural sets of three
shared vaults, tldr-pages' hard subset and paraphrases) in the same single-branch clones,
the BM25 and vector note lists are computed once with the real `Searcher` (cached as JSON
under `--cache`); each candidate fusion (`Fusion` blocks as a manifest holds them: the
vector list's weight and how deep it takes part) is then applied with the real
`search.ranked` and scored by nDCG@10, per tier by mean nDCG@10 leaving one vault out
among the tier's vaults: each held-out vault's nDCG@10 is printed with the shipped
fusion, the candidate chosen in sample and the one chosen without it; `--older` then
scores the shipped fusion and the in-sample choice on the older sets docs/query.md
reports (the qa sets of ../shared/corpora/qa and our paraphrase sets), beside each
single ranker.

`--worst-kind` chooses instead by issue 27's per-kind bar (hybrid >= max(BM25, semantic)
- 0.005 on every set and question kind), retired by issue 37 since no fixed fusion meets
it: for each held-out vault, the candidate with the best worst margin over every kind of
the other vaults and both tiers (ties: the better mean), its margins printed beside the
in-sample choice's and the index's own fusion's.

Every list is the real one: BM25 over paragraphs and the vectors (`Searcher`), and the
note-level BM25 list (`notebm25.ranked_notes`); candidates weigh the note list 0 (left
out, as in an index built before it) to 3.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.search_targets import (
    MODELS,
    NATURAL,
    QA,
    VAULTS,
    clone_of,
    ndcg,
    open_view,
    questions,
)

KEEP = 300
WEIGHTS = (1.0, 1.5, 2.0, 3.0, 4.0)
DEPTHS = (5, 10, 20, 50, None)
NOTE_WEIGHTS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
"""Weights of the note-level BM25 list tried (0: without it)."""
NOTES = "notes"


def lists(work: Path, vault: str, tier: str, cache: Path) -> dict[str, Any]:
    """Each answerable question's note lists: BM25's (paragraphs), the vectors' and the
    note-level BM25 list (`notes`), computed once and cached (a cache from before the
    note list gets it added)."""
    path = cache / f"lists-{vault}-{tier}.json"
    got: dict[str, Any] | None = None
    if path.is_file():
        got = json.loads(path.read_text(encoding="utf-8"))
        if all(NOTES in r for r in got["rows"]):
            return got
    from kbase_ci.query.notebm25 import ranked_notes
    from kbase_ci.query.queryterms import QueryTerms
    from kbase_ci.query.search import Searcher

    view = open_view(clone_of(work, vault, tier))
    if got is None:
        embedder = Searcher(view, MODELS[tier]).embedder()[0]
        rows = []
        for r in questions(vault):
            if not r["answers"]:
                continue
            s = Searcher(view, MODELS[tier])
            q = QueryTerms.of(r["query"], s)
            rows.append({"query": r["query"], "kind": r["kind"], "answers": r["answers"],
                         "bm25": [[h.path, h.score] for h in s.bm25(q)[:KEEP]],
                         "semantic": [[h.path, h.score]
                                      for h in s.semantic(q, embedder)[:KEEP]]})
        got = {"vault": vault, "tier": tier, "rows": rows}
    for row in got["rows"]:
        s = Searcher(view, None)
        row[NOTES] = [list(x) for x in ranked_notes(s, QueryTerms.of(row["query"], s), KEEP)]
    path.write_text(json.dumps(got), encoding="utf-8")
    return got


def candidate(weight: float, depth: int | None, notes: float = 0.0) -> Any:
    """A manifest's `fusion` block: the vectors' `weight` and `depth`, the note-level
    list's weight `notes` (0: not fused, as in an index built before it)."""
    from kbase_ci.index.blocks import Fusion, Ranker
    from kbase_ci.index.ranking import STATS

    rankers = {"bm25": Ranker(1.0, None, "zero"),
               "semantic": Ranker(weight, depth, "last", STATS)}
    if notes:
        rankers[NOTES] = Ranker(notes, None, "zero")
    return Fusion("z-score", STATS, rankers)


def scores(view: Any, data: dict[str, Any], block: Any, only: str | None = None
           ) -> dict[str, float]:
    """nDCG@10 per question kind (and `all`) of `block`'s fusion (`only`: one list)."""
    from kbase_ci.query.hits import ChunkHit
    from kbase_ci.query.queryterms import QueryTerms
    from kbase_ci.query.search import ranked

    per: dict[str, list[float]] = defaultdict(list)
    for r in data["rows"]:
        hits = {name: [ChunkHit(p, (), 1, 1, s) for p, s in r[name]]
                for name in ("bm25", "semantic", NOTES) if only is None or name == only}
        order = ranked(view, QueryTerms.asked(r["query"], (), {}), hits, block)[0]
        got = ndcg([n.path for n in order[:10]], r["answers"])
        per[r["kind"]].append(got)
        per["all"].append(got)
    return {k: sum(v) / len(v) for k, v in per.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kbase-search-targets"))
    ap.add_argument("--tiers", default="static,transformer")
    ap.add_argument("--vaults", default=",".join(VAULTS))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/kbase-fusion-fit"))
    ap.add_argument("--mean", action="store_true",
                    help="choose by mean nDCG@10 per tier (the default; kept for old notes)")
    ap.add_argument("--worst-kind", action="store_true",
                    help="choose by issue 27's retired per-kind bar instead")
    ap.add_argument("--older", action="store_true",
                    help="also score the older sets (qa sets, paraphrases)")
    args = ap.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    cands = {f"w={w} depth={d}" + (f" notes={n}" if n else ""): candidate(w, d, n)
             for w, d, n in itertools.product(WEIGHTS, DEPTHS, NOTE_WEIGHTS)}
    table: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    for tier in args.tiers.split(","):
        for vault in args.vaults.split(","):
            data = lists(args.work, vault, tier, args.cache)
            view = open_view(clone_of(args.work, vault, tier))
            got = {"bm25": scores(view, data, None, "bm25"),
                   "semantic": scores(view, data, None, "semantic"),
                   "index": scores(view, data, view.manifest.fusion)}
            got.update({name: scores(view, data, block) for name, block in cands.items()})
            table[(vault, tier)] = got
            print(f"{vault} {tier}: scored", file=sys.stderr, flush=True)

    if not args.worst_kind:
        return by_mean(args, table, cands)

    def margins(key: tuple[str, str], name: str) -> dict[str, float]:
        got = table[key]
        return {k: got[name][k] - max(got["bm25"][k], got["semantic"][k]) for k in got[name]}

    def choose(keys: list[tuple[str, str]]) -> str:
        return max(cands, key=lambda c: (min(min(margins(k, c).values()) for k in keys),
                                         sum(table[k][c]["all"] for k in keys)))

    keys = list(table)
    everywhere = choose(keys)
    print(f"chosen on every vault: {everywhere}")
    print()
    print("| vault | tier | kind | n-weighted nDCG@10: bm25 | semantic | hybrid (index) | "
          "margin (index) | margin, chosen in sample | margin, chosen without this vault "
          "(out of sample) | chosen without it |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for vault in sorted({v for v, _ in keys}, key=VAULTS.index):
        held = choose([k for k in keys if k[0] != vault])
        for key in [k for k in keys if k[0] == vault]:
            got = table[key]
            mi, mo, mx = margins(key, everywhere), margins(key, held), margins(key, "index")
            for kind in sorted(got["index"]):
                print(f"| {vault} | {key[1]} | {kind} | {got['bm25'][kind]:.3f} | "
                      f"{got['semantic'][kind]:.3f} | {got['index'][kind]:.3f} | "
                      f"{mx[kind]:+.3f} | {mi[kind]:+.3f} | {mo[kind]:+.3f} | {held} |")
    return 0


Table = dict[tuple[str, str], dict[str, dict[str, float]]]


def by_mean(args: argparse.Namespace, table: Table, cands: dict[str, Any]) -> int:
    """`--mean`: per tier, the candidate with the best mean nDCG@10 over the tier's
    vaults, and leaving each vault out; beside each nDCG@10, hybrid's worst margin over
    the better single ranker (BM25 on paragraphs, the vectors) on any question kind."""
    def mean(keys: list[tuple[str, str]], name: str) -> float:
        return sum(table[k][name]["all"] for k in keys) / len(keys)

    def worst(key: tuple[str, str], name: str) -> str:
        got = table[key]
        m, kind = min((got[name][k] - max(got["bm25"][k], got["semantic"][k]), k)
                      for k in got[name])
        return f"{got[name]['all']:.3f} ({m:+.3f} {kind})"

    print("| tier | held-out vault | index's fusion | chosen in sample | chosen without it "
          "| candidate chosen without it |")
    print("| --- | --- | --- | --- | --- | --- |")
    chosen: dict[str, str] = {}
    for tier in args.tiers.split(","):
        keys = [k for k in table if k[1] == tier]
        chosen[tier] = max(cands, key=lambda c: mean(keys, c))
        outside = []
        for key in keys:
            others = [k for k in keys if k != key]
            held = max(cands, key=lambda c: mean(others, c)) if others else chosen[tier]
            outside.append(table[key][held]["all"])
            print(f"| {tier} | {key[0]} | {worst(key, 'index')} | "
                  f"{worst(key, chosen[tier])} | {worst(key, held)} | {held} |")
        natural = [i for i, k in enumerate(keys) if k[0] in NATURAL]
        print(f"| {tier} | mean of {', '.join(keys[i][0] for i in natural)} | "
              f"{mean([keys[i] for i in natural], 'index'):.3f} | "
              f"{mean([keys[i] for i in natural], chosen[tier]):.3f} | "
              f"{sum(outside[i] for i in natural) / max(1, len(natural)):.3f} | |")
        print(f"| {tier} | in sample: {chosen[tier]} | | | | |")
    if args.older:
        older(args, {t: cands[c] for t, c in chosen.items()})
    return 0


OLDER = {"obsidian-tasks-docs": ("qa/obsidian-tasks-docs.jsonl",
                                 "fixtures/query/paraphrases-obsidian-tasks-docs.jsonl",
                                 "bench/data/paraphrases-obsidian-tasks-docs.jsonl"),
         "data-engineering-wiki": ("qa/data-engineering-wiki.jsonl",
                                   "fixtures/query/paraphrases-data-engineering-wiki.jsonl"),
         "dnd-5e-srd": ("bench/data/paraphrases-dnd-5e-srd.jsonl",)}
"""The older sets per vault: `qa/` under ../shared/corpora, the rest in this repo."""


def older(args: argparse.Namespace, chosen: dict[str, Any]) -> None:
    """nDCG@10 on the older sets: each single ranker, the shipped fusion, the choice."""
    from kbase_ci.query.hits import ChunkHit
    from kbase_ci.query.notebm25 import ranked_notes
    from kbase_ci.query.queryterms import QueryTerms
    from kbase_ci.query.search import Searcher, ranked

    repo = Path(__file__).resolve().parents[1]
    print()
    print("| tier | set | questions | bm25 | semantic | index's fusion | chosen |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for tier, block in chosen.items():
        for vault, files in OLDER.items():
            view = open_view(clone_of(args.work, vault, tier))
            embedder = Searcher(view, MODELS[tier]).embedder()[0]
            for rel in files:
                path = QA.parent / rel if rel.startswith("qa/") else repo / rel
                rows = [r for r in map(json.loads, path.read_text(encoding="utf-8")
                                       .splitlines()) if r.get("answers")]
                got: dict[str, list[float]] = defaultdict(list)
                for r in rows:
                    s = Searcher(view, MODELS[tier])
                    q = QueryTerms.of(r["query"], s)
                    hits = {"bm25": [ChunkHit(h.path, (), 1, 1, h.score)
                                     for h in s.bm25(q)[:KEEP]],
                            "semantic": [ChunkHit(h.path, (), 1, 1, h.score)
                                         for h in s.semantic(q, embedder)[:KEEP]],
                            NOTES: [ChunkHit(p, (), 1, 1, v)
                                    for p, v in ranked_notes(s, q, KEEP)]}
                    runs = {"bm25": ({"bm25": hits["bm25"]}, view.manifest.fusion),
                            "semantic": ({"semantic": hits["semantic"]}, view.manifest.fusion),
                            "index": (hits, view.manifest.fusion), "chosen": (hits, block)}
                    for name, (lists_, fusion) in runs.items():
                        order = ranked(view, q, lists_, fusion)[0]
                        got[name].append(ndcg([n.path for n in order[:10]], r["answers"]))
                cells = " | ".join(f"{sum(v) / len(v):.3f}" for v in got.values())
                print(f"| {tier} | {rel} | {len(rows)} | {cells} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
