"""Hybrid ranking: the note lists of BM25 (paragraphs), the vectors and note-level BM25
(kbase_ci.query.notebm25) fused by standardised scores.

Each ranker's scores over its best `STATS` notes are turned into z-scores (minus their
mean, over their spread), weighted and added; a note missing from a list gets the score
it would have had there: 0 for a BM25 list (no query word), the list's lowest for the
vectors, whose list takes part only down to `depth` notes (below that, similarity ranks
noise: cutting there was what kept the cross-language tldr set from losing to BM25
alone).

Why z-scores, not reciprocal ranks or raw scores (measured, bench/fusion.py, every qa set
and both paraphrase sets): a ranker that is sure of its first note gives it a score far
above the rest, and one that is not gives a flat list; ranks lose that, raw scores are not
comparable (BM25 0..30, cosines 0..1). Plain RRF (k = 60) lost up to 0.03 MRR@10 to the
better single ranker on some set; these weights lose at most the 0.005 the issue allows
on any set. The weights depend on how good the model is, so the build records them in
the manifest (`fusion`) from the model's kind (kbase_ci.index.ranking), and queries read
them there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from kbase_ci.index.blocks import Ranker
from kbase_ci.index.ranking import STATS


def fuse(lists: Mapping[str, Sequence[tuple[str, float]]], rankers: Mapping[str, Ranker]
         ) -> list[tuple[str, float]]:
    """Notes by fused score, best first (ties by path). `lists`: per ranker, (note,
    score) best first. One list alone keeps its own order and scores."""
    present = {name: lst for name, lst in lists.items() if lst}
    if len(present) == 1:
        (only,) = present.values()
        return sorted(only, key=lambda x: (-x[1], x[0]))
    total: dict[str, float] = {}
    missing: list[float] = []
    seen: list[set[str]] = []
    for name, lst in present.items():
        r = rankers[name]
        part = lst[:r.depth] if r.depth is not None else lst
        values = [s for _, s in (lst[:r.stats] if r.stats is not None else part[:STATS])]
        mean = sum(values) / len(values)
        spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values)) or 1.0
        for path, score in part:
            total[path] = total.get(path, 0.0) + r.weight * (score - mean) / spread
        floor = 0.0 if r.floor == "zero" else part[-1][1]
        missing.append(r.weight * (floor - mean) / spread)
        seen.append({p for p, _ in part})
    for path in total:
        for had, low in zip(seen, missing, strict=True):
            if path not in had:
                total[path] += low
    return sorted(total.items(), key=lambda x: (-x[1], x[0]))
