"""kbase's model-free tier against a reference stemmed note-level BM25:
`python -m bench.lexical_reference [--work DIR] [--vaults ...] [--json OUT]`.

The reference is what anyone would build in ten lines: bm25s (lucene BM25, k1 1.5,
b 0.75) with PyStemmer's English stemmer and bm25s's English stopwords, each note one
document, built from the very notes kbase's index holds (their work-tree text in the
clone; `title`: the note's title on a line before its text, `text`: the text alone).
kbase's figure is its BM25-only tier: `kbase search` (the library it calls,
`search_answer`, hybrid mode) in the static tier's `git clone --single-branch` of a
published index with no model here (bench/search_targets.py's `bm25` tier), as an
agent's clone without the model ranks.

`--fit` also chooses the model-free tier's one weight, the note-level list's against
paragraph BM25's 1.0 (kbase_ci.index.ranking.LEXICAL), among `WEIGHTS` (0: paragraphs
alone, as before issue 37) by mean nDCG@10 over the vaults, and leaving each vault out:
each question's two lists are computed once (the real `Searcher` and `notebm25`), each
candidate applied with the real `search.ranked`; printed per held-out vault beside the
reference.

Questions: every answerable question of bench/search_targets.py's sets: the hand-written
`natural-*` sets of ../shared/corpora/qa/ for obsidian-tasks-docs, data-engineering-wiki,
dnd-5e-srd, vaultofknowledge and dendron-site; for tldr-pages (its English pages) 100
questions of tldr-en.jsonl's hard subset and our 30 paraphrases. Printed per vault:
nDCG@10 of both reference variants and of kbase's BM25-only tier, kbase minus the
better reference, by question kind; the worst vault named last.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.search_targets import LIMIT, Runner, clone_of, ndcg, open_view, questions

VAULTS = ("obsidian-tasks-docs", "data-engineering-wiki", "dnd-5e-srd", "tldr-pages",
          "vaultofknowledge", "dendron-site")
VARIANTS = ("title", "text")
"""How the reference makes a note's document: its title then its text, or its text."""
Ranker = Callable[[str], list[str]]


def reference(view: Any, variant: str) -> Ranker:
    """The reference ranker over the notes of `view`'s index (see the module docstring)."""
    import bm25s
    import numpy as np
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    paths = sorted(view.notes)
    docs = [(f"{view.notes[p].title}\n" if variant == "title" else "") + view.text(p)
            for p in paths]
    model = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    model.index(bm25s.tokenize(docs, stopwords="en", stemmer=stemmer, show_progress=False),
                show_progress=False)

    def rank(query: str) -> list[str]:
        words = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, return_ids=False,
                               show_progress=False)[0]
        known = [w for w in words if w in model.vocab_dict]
        if not known:
            return []
        scores = model.get_scores(known)
        order = np.argsort(-scores, kind="stable")[:LIMIT]
        return [paths[i] for i in order.tolist() if scores[i] > 0]
    return rank


def measure(work: Path, vault: str) -> dict[str, Any]:
    """nDCG@10 per question kind (and `all`) of each reference variant and of kbase's
    BM25-only tier on `vault`."""
    view = open_view(clone_of(work, vault, "bm25"))
    rankers: dict[str, Ranker] = {f"reference ({v})": reference(view, v) for v in VARIANTS}
    runner = Runner(view, "bm25")
    rankers["kbase bm25-only"] = lambda q: runner.ask(q, "hybrid").ranking
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in questions(vault):
        if not row["answers"]:
            continue
        for name, rank in rankers.items():
            got = ndcg(rank(row["query"]), row["answers"])
            per[name][row["kind"]].append(got)
            per[name]["all"].append(got)
    return {"vault": vault, "n": {k: len(v) for k, v in per["kbase bm25-only"].items()},
            "ndcg": {name: {k: sum(v) / len(v) for k, v in kinds.items()}
                     for name, kinds in per.items()}}


WEIGHTS = (0.0, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)
"""The note-level list's weights `--fit` tries."""


def candidate(weight: float) -> Any:
    """The model-free tier's fusion with the note-level list at `weight` (0: without)."""
    from kbase_ci.index.blocks import Fusion, Ranker
    from kbase_ci.index.ranking import NOTES, STATS

    rankers = {"bm25": Ranker(1.0, None, "zero")}
    if weight:
        rankers[NOTES] = Ranker(weight, None, "zero")
    return Fusion("z-score", STATS, rankers)


def fit_scores(work: Path, vault: str) -> dict[float, float]:
    """nDCG@10 over `vault`'s answerable questions of each weight of `WEIGHTS`."""
    from kbase_ci.query.hits import ChunkHit
    from kbase_ci.query.notebm25 import ranked_notes
    from kbase_ci.query.queryterms import QueryTerms
    from kbase_ci.query.search import ranked
    from kbase_ci.query.searcher import POOL, Searcher

    view = open_view(clone_of(work, vault, "bm25"))
    got: dict[float, list[float]] = defaultdict(list)
    for row in questions(vault):
        if not row["answers"]:
            continue
        s = Searcher(view, None)
        q = QueryTerms.of(row["query"], s)
        lists = {"bm25": s.bm25(q),
                 "notes": [ChunkHit(p, (), 1, 1, v) for p, v in ranked_notes(s, q, POOL)]}
        for w in WEIGHTS:
            order = ranked(view, q, lists if w else {"bm25": lists["bm25"]},
                           candidate(w))[0]
            got[w].append(ndcg([n.path for n in order[:LIMIT]], row["answers"]))
    return {w: sum(v) / len(v) for w, v in got.items()}


def print_fit(figures: list[dict[str, Any]], fits: dict[str, dict[float, float]]) -> None:
    """Per held-out vault: the better reference, the weight chosen on every vault (in
    sample) and the one chosen on the others (out of sample)."""
    def best(vaults: list[str]) -> float:
        return max(WEIGHTS, key=lambda w: (sum(fits[v][w] for v in vaults), -abs(w - 1)))

    everywhere = best(list(fits))
    print()
    print(f"chosen on every vault: notes weight {everywhere}")
    print()
    print("| held-out vault | better reference | paragraphs alone (0) | chosen in sample "
          "| chosen without it (out of sample) | weight chosen without it |")
    print("| --- | --- | --- | --- | --- | --- |")
    for f in figures:
        v = f["vault"]
        ref = max(f["ndcg"][n]["all"] for n in f["ndcg"] if n.startswith("reference"))
        held = best([u for u in fits if u != v])
        print(f"| {v} | {ref:.3f} | {fits[v][0.0]:.3f} | {fits[v][everywhere]:.3f} "
              f"({fits[v][everywhere] - ref:+.3f}) | {fits[v][held]:.3f} "
              f"({fits[v][held] - ref:+.3f}) | {held} |")
    print()
    print("| vault | " + " | ".join(f"w={w}" for w in WEIGHTS) + " |")
    print("| --- |" + " --- |" * len(WEIGHTS))
    for v, row in fits.items():
        print(f"| {v} | " + " | ".join(f"{row[w]:.3f}" for w in WEIGHTS) + " |")


def print_table(figures: list[dict[str, Any]]) -> None:
    names = list(figures[0]["ndcg"])
    print("| vault | kind | n | " + " | ".join(names) + " | kbase - better reference |")
    print("| --- | --- | --- |" + " --- |" * (len(names) + 1))
    for f in figures:
        for kind in sorted(f["n"], key=lambda k: (k != "all", k)):
            cells = [f["ndcg"][n][kind] for n in names]
            ref = max(f["ndcg"][n][kind] for n in names if n.startswith("reference"))
            print(f"| {f['vault']} | {kind} | {f['n'][kind]} | "
                  + " | ".join(f"{c:.3f}" for c in cells)
                  + f" | {f['ndcg']['kbase bm25-only'][kind] - ref:+.3f} |")
    margins = {f["vault"]: f["ndcg"]["kbase bm25-only"]["all"]
               - max(f["ndcg"][n]["all"] for n in names if n.startswith("reference"))
               for f in figures}
    worst = min(margins, key=lambda v: margins[v])
    print()
    print(f"worst vault: {worst} ({margins[worst]:+.3f}); kbase >= the better reference "
          f"on {sum(m >= 0 for m in margins.values())} of {len(margins)} vaults")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kbase-search-targets"),
                    help="the clones (bench/search_targets.py's: built once, reused)")
    ap.add_argument("--vaults", default=",".join(VAULTS))
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--fit", action="store_true",
                    help="also choose the note-level list's weight, leaving one vault out")
    args = ap.parse_args(argv)
    figures = []
    fits: dict[str, dict[float, float]] = {}
    for vault in args.vaults.split(","):
        figures.append(measure(args.work, vault))
        if args.fit:
            fits[vault] = fit_scores(args.work, vault)
        print(f"{vault}: done", file=sys.stderr, flush=True)
    print_table(figures)
    if args.fit:
        print_fit(figures, fits)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
