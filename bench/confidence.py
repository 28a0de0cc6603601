"""Fitting search's verdict and validating it out of sample: `python -m bench.confidence
[--work DIR] [--tiers ...] [--vaults ...] [--features FILE]`.

The verdict (kbase_ci.query.verdict) says a query is answered when one of the first
`DEPTH` hits reaches `low` confidence (kbase_ci.query.evidence.level). This script asks
every question of bench/search_targets.py (the shared natural-*/absent-* sets of three
vaults; for tldr-pages its hard known-answer subset, our paraphrases and absent topics:
see that module's docstring) in the same `git clone --single-branch` clones, per tier
(`static`, `transformer`, `bm25`: the static clone without its model), and keeps each
question's first hits with the evidence the rule reads (`--features` caches them as
JSON). Then, leave one vault out: for each vault, the rule's few parameters are chosen on
the other vaults (both model tiers together; `alone`, the words-only threshold, on the
BM25-only tier) by balanced accuracy (the mean of "answerable answered" and "absent not
answered", averaged over vaults and tiers so no vault outweighs another), and reported on
the held-out vault, beside the figures of the rule fitted on every vault (in sample).
The rule kbase ships is the one fitted on every vault (`evidence.RULE`).

The parameters, all on scales an index carries itself: the IDF coverage a hit needs on
words (`low`, `alone`), the semantic margin (the hit's cosine against the index's own
background of null questions: 0 at its median, 1 at its maximum) that vetoes shared words
without the meaning (`veto`) and that rescues a paraphrase with few shared words
(`rescue`, with at least `rescue_idf` of the words), the grain the words are counted at
(the best paragraph, the best two, the whole note) and how many first hits the verdict
reads (`depth`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.search_targets import TIERS, VAULTS, clone_of, judged_questions, open_view

MAX_DEPTH = 3
GRAINS = ("chunk", "two", "note")


def _note_sets(view: Any, path: str, terms: list[str]) -> list[frozenset[str]]:
    """The query terms each chunk of an indexed note holds (the shard's postings)."""
    reader = view.source.reader
    number = view.number[path]
    core = reader.core()
    model = reader.bm25(core["groups"][core["group"][number]][0])
    first, count = reader.chunk_span(number)
    if model is None:
        return []
    return [frozenset(t for t in terms if model.contains(t, first + i)) for i in range(count)]


def _grains(q: Any, sets: list[frozenset[str]]) -> dict[str, tuple[float, float]]:
    """(IDF coverage, term coverage) of the best chunk, the best two, the note."""
    terms = q.terms
    mass = q.mass

    def cov(have: frozenset[str]) -> tuple[float, float]:
        got = sum(q.idf.get(t, 0.0) for t in have)
        return (got / mass if mass > 0 else 0.0, len(have) / len(terms) if terms else 0.0)

    ranked = sorted(sets, key=lambda s: -sum(q.idf.get(t, 0.0) for t in s))
    empty: frozenset[str] = frozenset()
    return {"chunk": cov(ranked[0] if ranked else empty),
            "two": cov(empty.union(*ranked[:2])),
            "note": cov(empty.union(*ranked))}


def collect(work: Path, vault: str, tier: str) -> dict[str, Any]:
    """Every question's first `MAX_DEPTH` hits (hybrid, as `kbase search` ranks) with
    their evidence at each grain, and the index's background."""
    from kbase_ci.index.cosinebaseline import margin

    view = open_view(clone_of(work, vault, tier))
    bg = None if tier == "bm25" else view.manifest.background
    rows = []
    for row, _, q, judged in judged_questions(view, vault, tier, MAX_DEPTH):
        hits = []
        for n, e in judged.top:
            sets = _note_sets(view, n.path, q.terms) if n.path in view.number else []
            hits.append({"path": n.path, "named": e.named is not None, "cosine": e.cosine,
                         "margin": None if e.cosine is None else margin(e.cosine, bg),
                         **{g: list(v) for g, v in _grains(q, sets).items()}})
        rows.append({"kind": row["kind"], "query": row["query"], "answers": row["answers"],
                     "hits": hits})
    return {"vault": vault, "tier": tier, "rows": rows}


@dataclass(frozen=True)
class Params:
    grain: str = "chunk"
    low: float = 0.5
    veto: float = 0.5
    rescue: float = 1.0
    rescue_idf: float = 0.3
    alone: float = 0.55
    depth: int = 3


    def rule(self) -> Any:
        """The evidence.Rule these parameters make (medium and high are not fitted:
        the verdict reads `low`)."""
        from kbase_ci.query.evidence import RULE

        return RULE._replace(idf=(max(RULE.idf[0], self.low), max(RULE.idf[1], self.low),
                                  self.low),
                             alone=self.alone, veto=self.veto,
                             rescue=(self.rescue_idf, self.rescue))


def passes(hit: dict[str, Any], p: Params) -> bool:
    """The hit is `low` or better under `p` (evidence.level itself)."""
    from kbase_ci.query.evidence import level

    idf, cov = hit[p.grain]
    return level(idf, cov, hit["margin"], hit["named"], _rules[p]) != "none"


_rules: dict[Params, Any] = {}


def _prepare(params: Iterable[Params]) -> list[Params]:
    out = list(params)
    for p in out:
        if p not in _rules:
            _rules[p] = p.rule()
    return out


def answered(row: dict[str, Any], p: Params) -> bool:
    return any(passes(h, p) for h in row["hits"][:p.depth])


def rates(rows: list[dict[str, Any]], p: Params) -> tuple[float, float]:
    """(answerable answered, absent not answered)."""
    ans = [r for r in rows if r["answers"]]
    absent = [r for r in rows if not r["answers"]]
    a = sum(answered(r, p) for r in ans) / len(ans) if ans else math.nan
    b = sum(not answered(r, p) for r in absent) / len(absent) if absent else math.nan
    return a, b


def score(groups: Iterable[list[dict[str, Any]]], p: Params) -> float:
    vals = [sum(rates(g, p)) / 2 for g in groups]
    return sum(vals) / len(vals) if vals else 0.0


def grid_semantic() -> Iterable[Params]:
    for grain, low, veto, rescue, rescue_idf, depth in itertools.product(
            GRAINS, (0.4, 0.5, 0.6, 0.7), (-1.0, 0.0, 0.5), (0.8, 1.0, 1.2, 1.4, 1.7, 2.0),
            (0.0, 0.15, 0.3), (1, 3)):
        yield Params(grain, low, veto, rescue, rescue_idf, depth=depth)


def fit(data: list[dict[str, Any]]) -> Params:
    """The parameters with the best balanced accuracy on `data` (first in grid order on
    ties): the model tiers' ones, then `alone` on the BM25-only tier."""
    sem = [d["rows"] for d in data if d["tier"] != "bm25"]
    best = max(_prepare(grid_semantic()), key=lambda p: score(sem, p)) if sem else Params()
    lex = [d["rows"] for d in data if d["tier"] == "bm25"]
    if lex:
        best = max(_prepare(Params(**{**asdict(best), "alone": a})
                            for a in (0.4, 0.5, 0.55, 0.6, 0.7, 0.8)),
                   key=lambda p: score(lex, p))
    _prepare([best])
    return best


def _by_kind(rows: list[dict[str, Any]], p: Params) -> dict[str, str]:
    kinds: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        if not r["answers"]:
            kinds[r["kind"]].append(not answered(r, p))
    return {k: f"{sum(v)}/{len(v)}" for k, v in sorted(kinds.items())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kbase-search-targets"))
    ap.add_argument("--tiers", default=",".join(TIERS))
    ap.add_argument("--vaults", default=",".join(VAULTS))
    ap.add_argument("--features", type=Path, default=None,
                    help="cache of the collected evidence (read if there, else written)")
    ap.add_argument("--cached-only", action="store_true",
                    help="fit on what --features holds; collect (and build) nothing")
    args = ap.parse_args(argv)
    data: list[dict[str, Any]] = []
    if args.features is not None and args.features.is_file():
        data = json.loads(args.features.read_text(encoding="utf-8"))
    have = {(d["vault"], d["tier"]) for d in data}
    for tier in args.tiers.split(","):
        for vault in args.vaults.split(","):
            if (vault, tier) not in have and not args.cached_only:
                data.append(collect(args.work, vault, tier))
                print(f"{vault} {tier}: collected", file=sys.stderr, flush=True)
                if args.features is not None:
                    args.features.write_text(json.dumps(data), encoding="utf-8")
    data = [d for d in data if d["tier"] in args.tiers.split(",")
            and d["vault"] in args.vaults.split(",")]
    _prepare([Params()])
    everywhere = fit(data)
    print(f"fitted on every vault (shipped): {everywhere}")
    print()
    print("| held-out vault | tier | answerable answered: in sample | out of sample | "
          "absent not answered: in sample | out of sample | absent by kind (out of "
          "sample) | rule fitted without it |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    vaults = sorted({d["vault"] for d in data}, key=VAULTS.index)
    for vault in vaults:
        held = fit([d for d in data if d["vault"] != vault])
        for d in data:
            if d["vault"] != vault:
                continue
            ai, bi = rates(d["rows"], everywhere)
            ao, bo = rates(d["rows"], held)
            kinds = ", ".join(f"{k} {v}" for k, v in _by_kind(d["rows"], held).items())
            print(f"| {vault} | {d['tier']} | {ai:.3f} | {ao:.3f} | {bi:.3f} | {bo:.3f} | "
                  f"{kinds} | {held} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
