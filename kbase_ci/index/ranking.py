"""How an index's rankers are weighted when a hybrid search fuses them
(kbase_ci.query.fusion): per kind of embedding model, chosen by measurement, and written
into the manifest (`fusion`) by the build, so that queries fuse as the index was meant
to be read and another model's index carries its own weights.

Measured with bench/fusion.py on kbase's own rankings of every qa set of
../shared/corpora/qa, our paraphrase sets (fixtures/query/) and issue 20's obsidian-tasks-
docs paraphrases (bench/data/), by MRR@10 of hybrid minus the better single ranker on the
worst set: both tiers are best at semantic weight 3.0, depth 5, the list's mean and spread
taken over its top 100 notes (a sure first note stands out): static minilm-static-256
-0.002, transformer minilm-l6-onnx -0.003 (bench/query_quality.py, by question kind: at
worst -0.003 and -0.005). The spread of its top 30 lost 0.025 on the bench/data set
(static); weight 1.5 over the 5 alone lost 0.017 (transformer). A weight is
relative to BM25's 1.0; docs/query.md has the figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

STATS = 100
"""Notes of a list whose scores give its mean and spread."""


@dataclass(frozen=True, slots=True)
class Ranker:
    weight: float
    depth: int | None
    """How many of its top notes take part (None: all)."""
    floor: str
    """What a note missing from the list scores: "zero" or "last" (the lowest taking part)."""
    stats: int | None = None
    """How many of its top notes give the mean and spread (None: those taking part, at
    most `STATS`). More than `depth` lets a sure first note stand out further."""

    def to_json(self) -> dict[str, Any]:
        return {"weight": self.weight, "depth": self.depth, "floor": self.floor,
                "stats": self.stats}


WEIGHTS: dict[str, dict[str, Ranker]] = {
    "model2vec": {"bm25": Ranker(1.0, None, "zero"), "semantic": Ranker(3.0, 5, "last", 100)},
    "onnx": {"bm25": Ranker(1.0, None, "zero"), "semantic": Ranker(3.0, 5, "last", 100)},
}
"""Per model kind (`modelfolder.STATIC`, `TRANSFORMER`), chosen by measurement."""


def settings(kind: str | None) -> dict[str, Any] | None:
    """The manifest's `fusion` block for an index whose model is of `kind`."""
    rankers = WEIGHTS.get(kind or "")
    if rankers is None:
        return None
    return {"method": "z-score", "stats": STATS,
            "rankers": {name: r.to_json() for name, r in sorted(rankers.items())}}


def rankers_of(block: Any) -> dict[str, Ranker]:
    """The rankers of a manifest's `fusion` block; the static defaults for an index
    without one, or with values this kbase cannot use (the block is untrusted data)."""
    out = dict(WEIGHTS["model2vec"])
    got = block.get("rankers") if isinstance(block, dict) else None
    if not isinstance(got, dict):
        return out
    for name, r in got.items():
        if name not in out or not isinstance(r, dict):
            continue
        weight, depth, floor = r.get("weight"), r.get("depth"), r.get("floor")
        stats = r.get("stats")
        if isinstance(weight, int | float) and not isinstance(weight, bool) \
                and math.isfinite(weight) and weight >= 0 \
                and (depth is None or (type(depth) is int and depth > 0)) \
                and (stats is None or (type(stats) is int and 1 < stats <= 10 * STATS)) \
                and floor in ("zero", "last"):
            out[name] = Ranker(float(weight), depth, str(floor), stats)
    return out


