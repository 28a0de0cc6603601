"""Other fusion families than the shipped z-score sum, on the same cached lists:
`python -m bench.fusion_families [--work DIR] [--cache DIR] [--tiers ...] [--vaults ...]`.

Issue 27 asks hybrid to be >= the better single ranker - 0.005 on every set and every
question kind (nDCG@10 on the shared natural sets). `bench.fusion_fit` showed no weight
or depth of the shipped z-score fusion meets it. This script asks whether another family
would, before anyone builds one: reciprocal-rank fusion (k = 10, 30, 60), min-max
normalised sums, z-scores over each whole list, and z-scores weighted per query by each
list's own sureness (the gap between its first and tenth z-score: a list sure of its
first note counts more). Each is applied to the BM25 and vector note lists that
`bench.fusion_fit` caches (the real `Searcher`'s, 300 notes deep), by plain arithmetic
here: no title-first rule, so the figures compare families with each other, not with
`search.ranked`. Printed: per family, its worst margin over the better single ranker on
each vault and tier (the kind it is worst on), and its mean nDCG@10 over every set.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.fusion_fit import lists
from bench.search_targets import VAULTS, ndcg

Ranked = list[list[Any]]
"""[[path, score], ...], best first."""
Family = Callable[[dict[str, Ranked]], list[str]]


def _z(ranked: Ranked) -> tuple[dict[str, float], float]:
    """Each note's z-score over the list, and the list's lowest (a missing note's)."""
    scores = [float(s) for _, s in ranked]
    if len(scores) < 2:
        return {p: 0.0 for p, _ in ranked}, 0.0
    mean, spread = statistics.fmean(scores), statistics.pstdev(scores) or 1.0
    z = {p: (float(s) - mean) / spread for p, s in ranked}
    return z, min(z.values())


def _order(score: dict[str, float]) -> list[str]:
    return sorted(score, key=lambda p: (-score[p], p))


def rrf(k: int, weight: float) -> Family:
    def fuse(r: dict[str, Ranked]) -> list[str]:
        score: dict[str, float] = defaultdict(float)
        for w, name in ((1.0, "bm25"), (weight, "semantic")):
            for i, (p, _) in enumerate(r[name]):
                score[p] += w / (k + i + 1)
        return _order(score)
    return fuse


def minmax(weight: float) -> Family:
    def norm(ranked: Ranked) -> dict[str, float]:
        scores = [float(s) for _, s in ranked]
        lo, hi = (min(scores), max(scores)) if scores else (0.0, 1.0)
        return {p: (float(s) - lo) / ((hi - lo) or 1.0) for p, s in ranked}

    def fuse(r: dict[str, Ranked]) -> list[str]:
        b, s = norm(r["bm25"]), norm(r["semantic"])
        return _order({p: b.get(p, 0.0) + weight * s.get(p, 0.0) for p in b.keys() | s})
    return fuse


def zsum(weight: float, sure: bool) -> Family:
    def gap(z: dict[str, float]) -> float:
        top = sorted(z.values(), reverse=True)
        return top[0] - top[min(9, len(top) - 1)] if top else 0.0

    def fuse(r: dict[str, Ranked]) -> list[str]:
        (zb, lb), (zs, ls) = _z(r["bm25"]), _z(r["semantic"])
        wb, ws = (gap(zb), weight * gap(zs)) if sure else (1.0, weight)
        return _order({p: wb * zb.get(p, lb) + ws * zs.get(p, ls) for p in zb.keys() | zs})
    return fuse


def families() -> dict[str, Family]:
    out: dict[str, Family] = {}
    for k in (10, 30, 60):
        for w in (1.0, 1.5, 2.0):
            out[f"rrf k={k} w={w}"] = rrf(k, w)
    for w in (1.0, 1.5, 2.0, 3.0):
        out[f"z-score w={w}"] = zsum(w, False)
        out[f"z-score by sureness w={w}"] = zsum(w, True)
        out[f"min-max w={w}"] = minmax(w)
    return out


def table(data: dict[str, Any], fams: dict[str, Family]) -> dict[str, dict[str, float]]:
    """nDCG@10 per family (and each single list) per question kind, and `all`."""
    singles: dict[str, Family] = {"bm25": lambda r: [p for p, _ in r["bm25"]],
                                  "semantic": lambda r: [p for p, _ in r["semantic"]]}
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in data["rows"]:
        for name, fuse in {**singles, **fams}.items():
            got = ndcg(fuse(row)[:10], row["answers"])
            per[name][row["kind"]].append(got)
            per[name]["all"].append(got)
    return {n: {k: sum(v) / len(v) for k, v in kinds.items()} for n, kinds in per.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kbase-search-targets"))
    ap.add_argument("--cache", type=Path, default=Path("/tmp/kbase-fusion-fit"))
    ap.add_argument("--tiers", default="static,transformer")
    ap.add_argument("--vaults", default=",".join(VAULTS))
    args = ap.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    fams = families()
    got = {(v, t): table(lists(args.work, v, t, args.cache), fams)
           for t in args.tiers.split(",") for v in args.vaults.split(",")
           if t == "static" or v != "tldr-pages"}
    keys = list(got)
    print("| family | " + " | ".join(f"{v} {t}" for v, t in keys) + " | mean nDCG@10 |")
    print("| --- " * (len(keys) + 2) + "|")
    for name in fams:
        cells = []
        for key in keys:
            t = got[key]
            margin, kind = min((t[name][k] - max(t["bm25"][k], t["semantic"][k]), k)
                               for k in t[name])
            cells.append(f"{margin:+.3f} ({kind})")
        mean = sum(got[k][name]["all"] for k in keys) / len(keys)
        print(f"| {name} | " + " | ".join(cells) + f" | {mean:.3f} |")
    met = [n for n in fams if all(
        got[k][n][kind] - max(got[k]["bm25"][kind], got[k]["semantic"][kind]) >= -0.005
        for k in keys for kind in got[k][n])]
    print(f"\nfamilies meeting the bar everywhere: {', '.join(met) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
