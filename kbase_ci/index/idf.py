"""BM25's IDF across an index's shards: each shard stores its scores with its own IDF
(`bm25.Postings`), and a query turns them into scores with the IDF of all shards
together, corrected for chunks the query's overlay adds or drops.

`shards` below are `bm25.Postings` (anything with `num_docs` and `doc_freq(term)`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any


def idf(num_docs: int, doc_freq: int) -> float:
    """BM25's IDF as bm25s computes it for `method="lucene"`."""
    return math.log(1 + (num_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def idf_weights(shards: Sequence[Any], terms: Sequence[str], *, extra_docs: int = 0,
                extra_df: Mapping[str, int] | None = None) -> list[dict[str, float]]:
    """Per shard, the factor that turns each term's stored scores (IDF of that shard)
    into scores with the IDF of all shards together. Shards split the vault by domain,
    so a term's IDF differs wildly between them (a term rare in a small shard looks
    precious there); without this, hits from different shards are not comparable. On
    obsidian-tasks-docs (13 shards) it raised BM25's MRR@10 from 0.57 to 0.72, as with
    one shard. `extra_docs` and `extra_df` correct the totals for chunks a query adds or
    drops (notes changed since the index: kbase_ci.query.overlay), so the IDF is the one
    a rebuild would compute."""
    unique = sorted(set(terms))
    dfs = [{t: s.doc_freq(t) for t in unique} for s in shards]
    total, overall = _totals(shards, unique, dfs, extra_docs, extra_df)
    out: list[dict[str, float]] = []
    for s, d in zip(shards, dfs, strict=True):
        out.append({t: idf(total, overall[t]) / idf(s.num_docs, d[t])
                    for t in unique if d[t] and idf(s.num_docs, d[t]) > 0})
    return out


def global_idf(shards: Sequence[Any], terms: Sequence[str], *, extra_docs: int = 0,
               extra_df: Mapping[str, int] | None = None) -> tuple[int, dict[str, float]]:
    """(chunks in all shards, each term's IDF over them): what `idf_weights` scales to. A
    term in no chunk gets the IDF of a term in one (the rarest there is)."""
    unique = sorted(set(terms))
    dfs = [{t: s.doc_freq(t) for t in unique} for s in shards]
    total, overall = _totals(shards, unique, dfs, extra_docs, extra_df)
    return total, {t: idf(total, max(1, overall[t])) for t in unique}


def _totals(shards: Sequence[Any], unique: Sequence[str], dfs: Sequence[dict[str, int]],
            extra_docs: int, extra_df: Mapping[str, int] | None) -> tuple[int, dict[str, int]]:
    total = sum(s.num_docs for s in shards) + extra_docs
    more = extra_df or {}
    return total, {t: max(0, sum(d[t] for d in dfs) + more.get(t, 0)) for t in unique}
