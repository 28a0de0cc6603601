"""The features a verdict could read beyond the shipped rule's, per question of
bench/search_targets.py: `python -m bench.verdict_features OUT [--work DIR] [--tiers ...]
[--vaults ...]` (OUT: a JSON cache, extended when it is there; bench/verdict_model.py
fits and validates rules on it).

Every question is ranked as `kbase search` ranks it (hybrid, the clones of
bench/search_targets.py) and its first `verdict.DEPTH` hits judged as the verdict judges
them. Kept per hit, besides the shipped level: where it stands in each ranker's list
(BM25 and vectors, rank and score), its IDF coverage in its best chunk and over the note,
whether the query's rarest known terms (the highest IDF, one and two) are in that chunk /
in the note, and the cosine of that best chunk beside the note's best. Per question: the
first notes of each ranker (does the words' first note appear in the meaning's first k,
and the reverse), the gap between first and second score of each ranker, the query's
term count, unknown terms and the share of its IDF mass in its rarest term. Everything
is cheap at query time: the index's postings and vectors, no other model.

`features` turns a question's record into the numbers bench/verdict_model.py fits on, on
the verdict's hit (the first of the first hits that is `low` or better, else the first):
`idf` / `chunk_idf` (its IDF coverage over the note / in its best chunk; `chunk_share`:
their ratio), `margin`, `chunk_cos` (that chunk's cosine minus the note's best), `rare1` /
`rare2` (the query's rarest known term / two rarest in that chunk), `rare_share` (the
rarest term's share of the IDF mass), `unknown` (the share of terms no note holds),
`agree` (the first BM25 note is the first vector note), `b_in_s` / `s_in_b` (either first
note in the other's first three), `hit_bm25` / `hit_sem` (1 / the hit's rank in each
list), `sem_gap` (first minus second cosine of the vector list), `bm25_ratio` (second
over first BM25 score), `fused_gap` (first minus second fused score).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.search_targets import TIERS, VAULTS, clone_of, judged_questions, open_view

TOP = 10
"""Notes kept of each ranker's list (per question)."""
Row = dict[str, Any]
FAMILIES = {
    "agreement": ("agree", "b_in_s", "s_in_b", "hit_bm25", "hit_sem"),
    "rarest term": ("rare1", "rare2", "rare_share", "chunk_idf", "chunk_share"),
    "margins and gaps": ("margin", "chunk_cos", "sem_gap", "bm25_ratio", "fused_gap"),
}
ALL = ("idf", "unknown", *[f for fam in FAMILIES.values() for f in fam])


def _span(view: Any, path: str) -> tuple[Any, str, int, int] | None:
    """(reader, shard, first chunk, chunk count) of an indexed note."""
    if path not in view.number:
        return None
    reader = view.source.reader
    number = view.number[path]
    core = reader.core()
    first, count = reader.chunk_span(number)
    return reader, core["groups"][core["group"][number]][0], first, count


def _chunk_sets(view: Any, path: str, terms: list[str]) -> list[frozenset[str]]:
    span = _span(view, path)
    if span is None:
        return []
    reader, shard, first, count = span
    model = reader.bm25(shard)
    if model is None:
        return []
    return [frozenset(t for t in terms if model.contains(t, first + i)) for i in range(count)]


def _chunk_cosines(view: Any, path: str, qv: Any) -> list[float]:
    import numpy as np

    span = _span(view, path)
    if span is None or qv is None:
        return []
    reader, shard, first, count = span
    index = reader.vectors(shard)
    if index is None or not count:
        return []
    q = np.asarray(qv, dtype=np.float32)
    norm = float(np.linalg.norm(q))
    rows = index.unit_rows()[first:first + count]
    return [float(x) for x in (rows @ (q / norm))] if norm else []


def hit_features(view: Any, q: Any, path: str, qv: Any, rare: list[str]) -> dict[str, Any]:
    """The per-hit features of the module docstring (best chunk: the one holding most of
    the query's IDF mass, first on ties, as evidence.judge picks the section)."""
    sets = _chunk_sets(view, path, q.terms)
    mass = q.mass or 1.0

    def idf(have: frozenset[str]) -> float:
        return float(sum(q.idf.get(t, 0.0) for t in have)) / mass

    best = max(range(len(sets)), key=lambda i: (idf(sets[i]), -i)) if sets else None
    chunk = sets[best] if best is not None else frozenset()
    note: frozenset[str] = frozenset().union(*sets) if sets else frozenset()
    cos = _chunk_cosines(view, path, qv)
    return {"chunk_idf": idf(chunk), "note_idf": idf(note),
            "chunk_terms": len(chunk), "note_terms": len(note),
            "rare1_chunk": bool(rare[:1]) and rare[0] in chunk,
            "rare1_note": bool(rare[:1]) and rare[0] in note,
            "rare2_chunk": len(rare) >= 2 and set(rare[:2]) <= chunk,
            "rare2_note": len(rare) >= 2 and set(rare[:2]) <= note,
            "rare2_any_chunk": bool(set(rare[:2]) & chunk),
            "chunk_cos": cos[best] if cos and best is not None else None,
            "note_cos": max(cos) if cos else None}


def collect(work: Path, vault: str, tier: str) -> dict[str, Any]:
    from kbase_ci.query import verdict

    view = open_view(clone_of(work, vault, tier))
    rows = []
    for row, r, q, judged in judged_questions(view, vault, tier, verdict.DEPTH):
        query = row["query"]
        lists: dict[str, list[tuple[int, str, float]]] = {"bm25": [], "semantic": []}
        for n in r.fused:
            for ranker, got in lists.items():
                if ranker in n.ranks:
                    got.append((n.ranks[ranker][0], n.path, n.ranks[ranker][1]))
        for got in lists.values():
            got.sort()
        known = sorted((t for t in q.terms if t not in q.unknown),
                       key=lambda t: (-q.idf.get(t, 0.0), t))
        qv = r.searcher._query_vector
        hits = []
        for n, e in judged.top:
            hits.append({"path": n.path, "level": e.confidence, "named": e.named is not None,
                         "coverage": e.coverage, "idf_coverage": e.idf_coverage,
                         "cosine": e.cosine, "margin": e.margin,
                         "bm25_rank": n.ranks.get("bm25", (None, None))[0],
                         "bm25": n.ranks.get("bm25", (None, None))[1],
                         "sem_rank": n.ranks.get("semantic", (None, None))[0],
                         "fused": n.score,
                         **hit_features(view, q, n.path, qv, known)})
        mass = q.mass or 1.0
        rows.append({"kind": row["kind"], "query": query, "answers": row["answers"],
                     "terms": len(q.terms), "unknown": len(q.unknown),
                     "rare_share": (q.idf.get(known[0], 0.0) / mass) if known else 0.0,
                     "fused": [n.score for n in r.fused[:2]],
                     **{f"{k}_top": [(p, s) for _, p, s in got[:TOP]]
                        for k, got in lists.items()},
                     "hits": hits})
    return {"vault": vault, "tier": tier, "rows": rows}


def shipped(row: Row) -> bool:
    return any(h["level"] != "none" for h in row["hits"])


def _verdict_hit(row: Row) -> dict[str, Any] | None:
    return next((h for h in row["hits"] if h["level"] != "none"),
                row["hits"][0] if row["hits"] else None)


def features(row: Row) -> dict[str, float]:
    """The features of the module docstring, on the verdict's hit (else the first)."""
    h = _verdict_hit(row) or {}
    b = [p for p, _ in row["bm25_top"]]
    s = [p for p, _ in row["semantic_top"]]
    ss = [x for _, x in row["semantic_top"]]
    bs = [x for _, x in row["bm25_top"]]
    cos, note_cos = h.get("chunk_cos"), h.get("note_cos")
    return {
        "idf": h.get("idf_coverage", 0.0), "chunk_idf": h.get("chunk_idf", 0.0),
        "margin": h.get("margin") or 0.0,
        "chunk_cos": cos - note_cos if cos is not None and note_cos is not None else 0.0,
        "rare1": float(h.get("rare1_chunk", False)),
        "rare2": float(h.get("rare2_chunk", False)),
        "chunk_share": h.get("chunk_idf", 0.0) / h["idf_coverage"]
        if h.get("idf_coverage") else 0.0,
        "rare_share": row["rare_share"], "unknown": row["unknown"] / max(row["terms"], 1),
        "agree": float(bool(b) and bool(s) and b[0] == s[0]),
        "b_in_s": float(bool(b) and b[0] in s[:3]), "s_in_b": float(bool(s) and s[0] in b[:3]),
        "hit_bm25": 1.0 / h["bm25_rank"] if h.get("bm25_rank") else 0.0,
        "hit_sem": 1.0 / h["sem_rank"] if h.get("sem_rank") else 0.0,
        "sem_gap": ss[0] - ss[1] if len(ss) > 1 else 0.0,
        "bm25_ratio": bs[1] / bs[0] if len(bs) > 1 and bs[0] else 0.0,
        "fused_gap": row["fused"][0] - row["fused"][1] if len(row["fused"]) > 1 else 0.0,
        "shipped": float(shipped(row)),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kbase-search-targets"))
    ap.add_argument("--tiers", default=",".join(TIERS))
    ap.add_argument("--vaults", default=",".join(VAULTS))
    args = ap.parse_args(argv)
    data: list[dict[str, Any]] = []
    if args.out.is_file():
        data = json.loads(args.out.read_text(encoding="utf-8"))
    have = {(d["vault"], d["tier"]) for d in data}
    for tier in args.tiers.split(","):
        for vault in args.vaults.split(","):
            if (vault, tier) in have:
                continue
            data.append(collect(args.work, vault, tier))
            args.out.write_text(json.dumps(data), encoding="utf-8")
            print(f"{vault} {tier}: collected", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
