"""Would word proximity tell hard absent topics from answers? `python -m
bench.verdict_proximity [--work DIR] [--tier static] [--vaults ...]`.

The hard absent questions of the shared sets use only words the vault holds, so a note
holds most of them and the verdict (kbase_ci.query.verdict) answers. A hope: in an
answer the query's words stand together, in a hard absent question's best note they are
scattered. This script ranks every question as `kbase search` does (the clones of
bench/search_targets.py), and for the first `verdict.DEPTH` hits measures, on the note's
text with the index's own tokenizer, the largest share of the query's IDF mass inside
any window of 12, 25 and 50 terms, and the share of the query's adjacent term pairs that
stand within two terms of each other. Then it prints, per vault, the verdict's rates
(answerable answered / absent not answered, and hard absent not answered) as shipped and
with each proximity floor added to it. A floor worth fitting would lift the absent rate
without costing answers; none did when this was written (docs/query.md, "Verdict").
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench.search_targets import VAULTS, clone_of, judged_questions, open_view

WINDOWS = (12, 25, 50)
FLOORS = (0.4, 0.5, 0.6)


def window_share(terms: list[str], q: Any, width: int) -> float:
    """The largest share of the query's IDF mass inside `width` consecutive terms."""
    want = set(q.terms)
    at = [(i, t) for i, t in enumerate(terms) if t in want]
    inside: Counter[str] = Counter()
    best, first = 0.0, 0
    for pos, term in at:
        inside[term] += 1
        while at[first][0] < pos - width:
            gone = at[first][1]
            inside[gone] -= 1
            if not inside[gone]:
                del inside[gone]
            first += 1
        best = max(best, q.coverage(inside))
    return best


def pair_share(terms: list[str], q: Any) -> float:
    pairs = list(pairwise(q.terms))
    if not pairs:
        return 1.0
    near = set(pairwise(terms)) | set(zip(terms, terms[2:], strict=False))
    return sum((a, b) in near or (b, a) in near for a, b in pairs) / len(pairs)


def collect(work: Path, vault: str, tier: str) -> list[dict[str, Any]]:
    from kbase_ci.query import verdict
    from kbase_ci.query.overlay import tokenize

    clone = clone_of(work, vault, tier)
    view = open_view(clone)
    rows = []
    for row, r, q, judged in judged_questions(view, vault, tier, verdict.DEPTH):
        hits = []
        for n, e in judged.top:
            text = (clone / n.path).read_text(encoding="utf-8", errors="replace")
            terms = tokenize(text, r.searcher.stop, r.searcher.stemmer)
            hits.append({"shown": e.confidence != "none", "named": e.named is not None,
                         "pairs": pair_share(terms, q),
                         **{f"w{w}": window_share(terms, q, w) for w in WINDOWS}})
        rows.append({"kind": row["kind"], "answerable": bool(row["answers"]), "hits": hits})
    return rows


def rates(rows: list[dict[str, Any]], ok: Callable[[dict[str, Any]], bool]) -> str:
    def answered(r: dict[str, Any]) -> bool:
        return any(ok(h) for h in r["hits"])

    ans = [r for r in rows if r["answerable"]]
    absent = [r for r in rows if not r["answerable"]]
    hard = [r for r in absent if r["kind"] == "absent-hard"]
    return (f"{sum(map(answered, ans))}/{len(ans)}, "
            f"{sum(not answered(r) for r in absent)}/{len(absent)} "
            f"(hard {sum(not answered(r) for r in hard)}/{len(hard)})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kbase-search-targets"))
    ap.add_argument("--tier", default="static")
    ap.add_argument("--vaults", default=",".join(v for v in VAULTS if v != "tldr-pages"))
    args = ap.parse_args(argv)
    got = {v: collect(args.work, v, args.tier) for v in args.vaults.split(",")}
    rules: dict[str, Callable[[dict[str, Any]], bool]] = {"shipped": lambda h: h["shown"]}
    for w in WINDOWS:
        for floor in FLOORS:
            rules[f"+ window {w} >= {floor}"] = (
                lambda h, k=f"w{w}", f=floor: h["shown"] and (h["named"] or h[k] >= f))
    for floor in (0.25, 0.5):
        rules[f"+ pairs >= {floor}"] = (
            lambda h, f=floor: h["shown"] and (h["named"] or h["pairs"] >= f))
    print("| rule | " + " | ".join(f"{v}: answered, absent rejected" for v in got) + " |")
    print("| --- " * (len(got) + 1) + "|")
    for name, ok in rules.items():
        print(f"| {name} | " + " | ".join(rates(rows, ok) for rows in got.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
