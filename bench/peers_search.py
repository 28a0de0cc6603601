"""Search peers on the qa sets, on the same queries and the same corpus copy as kbase:
- `rg` (what an agent does with no index): `rg -i -c -F` with the query's words, files
  ranked by matching lines (a whole process per query, like `kbase search`);
- rank-bm25 (BM25Okapi) and tantivy over the index's own chunks, best chunk per note.
Latency is per query; rank-bm25 and tantivy are in-process (their index build is
reported apart), as is kbase's `search_answer`; `kbase search` whole-process is timed too.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import time
from collections.abc import Callable
from typing import Any

from bench.figure import summary
from bench.quality import Corpora, Indexed, load_rows, sample, tldr_hard
from bench.query_quality import metrics
from bench.workloads import MODEL

_WORD = re.compile(r"\w+")
STOP = frozenset(("a", "an", "and", "are", "as", "at", "be", "by", "do", "for", "from", "how",
                  "i", "in", "is", "it", "of", "on", "or", "the", "to", "what", "when",
                  "where", "which", "who", "why", "with", "you", "your", "can", "does", "my",
                  "this", "that"))
Ranker = Callable[[str], list[str]]


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def chunks(view: Any) -> tuple[list[str], list[str]]:
    """(note path, heading path + text) of every chunk of the index, in index order."""
    reader = view.source.reader
    paths: list[str] = []
    texts: list[str] = []
    lines: dict[str, list[str]] = {}
    for shard in reader.shards:
        for i, note in enumerate(reader.chunk_notes(shard)):
            if note not in lines:
                lines[note] = view.text(note).replace("\r\n", "\n").replace("\r", "\n").split("\n")
            heads, lo, hi = reader.chunk_row(shard, i)
            paths.append(note)
            texts.append(" ".join(heads) + "\n" + "\n".join(lines[note][lo - 1:hi]))
    return paths, texts


def _rollup(paths: list[str], order: list[int], scores: list[float]) -> list[str]:
    best: dict[str, float] = {}
    for i in order:
        p = paths[i]
        if p not in best:
            best[p] = scores[i]
    return sorted(best, key=lambda p: (-best[p], p))[:10]


def rank_bm25(paths: list[str], texts: list[str]) -> Ranker:
    import numpy as np
    from rank_bm25 import BM25Okapi

    bm = BM25Okapi([_tokens(t) or [""] for t in texts])

    def rank(query: str) -> list[str]:
        scores = bm.get_scores(_tokens(query))
        top = np.argsort(-scores, kind="stable")[:50]
        return _rollup(paths, [int(i) for i in top if scores[i] > 0], scores.tolist())
    return rank


def tantivy_ranker(paths: list[str], texts: list[str]) -> Ranker:
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("chunk", stored=True)
    sb.add_text_field("body", stored=False)
    schema = sb.build()
    index = tantivy.Index(schema)
    writer = index.writer(heap_size=100_000_000, num_threads=1)
    for i, text in enumerate(texts):
        writer.add_document(tantivy.Document(chunk=i, body=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()

    def rank(query: str) -> list[str]:
        words = " ".join(_tokens(query))  # drops the query-language syntax characters
        if not words:
            return []
        hits = searcher.search(index.parse_query(words, ["body"]), 50).hits
        order = [int(searcher.doc(addr)["chunk"][0]) for _, addr in hits]
        score = {c: s for (s, _), c in zip(hits, order, strict=True)}
        scores = [score.get(i, 0.0) for i in range(len(paths))] if order else []
        return _rollup(paths, order, scores)
    return rank


def rg_ranker(rg: str, corpus: Indexed) -> Ranker:
    def rank(query: str) -> list[str]:
        words = [w for w in _tokens(query) if w not in STOP and len(w) > 2] or _tokens(query)
        if not words:
            return []
        pats = [x for w in sorted(set(words)) for x in ("-e", w)]
        proc = subprocess.run([rg, "-i", "-c", "-F", "--no-messages", "-g", "*.md", *pats],
                              cwd=corpus.repo, capture_output=True, text=True, check=False)
        counts = []
        for line in proc.stdout.splitlines():
            path, _, n = line.rpartition(":")
            counts.append((-int(n), path))
        return [p for _, p in sorted(counts)[:10]]
    return rank


def kbase_ranker(view: Any, mode: str) -> Ranker:
    from kbase_ci.query.search import search_answer
    from kbase_ci.query.searcher import Searcher

    embedder = Searcher(view, MODEL).embedder()[0]  # loaded once, as `kbase mcp` keeps it

    def rank(query: str) -> list[str]:
        # Every hit up to the limit, whatever its confidence: the ranking's quality.
        ans = search_answer(view, query, mode=mode, limit=10, concise=True, model=MODEL,
                            embedder=embedder)
        return [x.path for x in ans.results]
    return rank


def score(name: str, workload: str, rank: Ranker, rows: list[dict[str, Any]],
          command: str, **extra: Any) -> dict[str, Any]:
    sums = [0.0, 0.0, 0.0]
    times: list[float] = []
    for r in rows:
        t0 = time.perf_counter()
        ranked = rank(r["query"])
        times.append(time.perf_counter() - t0)
        m = metrics(ranked, set(r["answers"]))
        sums = [a + b for a, b in zip(sums, m, strict=True)]
    n = len(rows)
    return {"name": name, "workload": workload, "n": n, "unit": "ms",
            "recall@5": round(sums[0] / n, 3), "mrr@10": round(sums[1] / n, 3),
            "ndcg@10": round(sums[2] / n, 3),
            "median": round(statistics.median(times) * 1000, 2),
            "min": round(min(times) * 1000, 2), "max": round(max(times) * 1000, 2),
            "cpu": None, "command": command, **extra}


def _kbase_process(corpus: Indexed, rows: list[dict[str, Any]]) -> dict[str, Any]:
    from bench.queries import KBASE, wall

    index = corpus.repo.parent / f"{corpus.name}-index"
    walls = [wall([*KBASE, "search", r["query"], "--mode", "bm25", "--index", str(index)],
                  corpus.repo) for r in rows]
    return summary("kbase search --mode bm25 (whole process)", corpus.name, walls, [],
                   "kbase search Q --mode bm25 --index DIR")


def measure(corpora: Corpora, *, limit: int, tldr: int, rg: str | None, have_bm25: bool,
            have_tantivy: bool, process_queries: int) -> tuple[list[dict[str, Any]], list[str]]:
    figs: list[dict[str, Any]] = []
    notes: list[str] = []
    plan = [(n, n, sample(load_rows(n), limit)) for n in
            ("obsidian-tasks-docs", "data-engineering-wiki")]
    if tldr:
        plan.append(("tldr-pages", "tldr-en (hard subset)", tldr_hard(tldr)))
    for corpus_name, set_name, rows in plan:
        corpus = corpora.get(corpus_name)
        paths, texts = chunks(corpus.view)
        w = f"{set_name} ({len(rows)} queries)"
        for mode in ("bm25", "hybrid"):
            figs.append(score(f"kbase {mode}", w, kbase_ranker(corpus.view, mode), rows,
                              "search_answer(view, q, mode=..., limit=10) in-process"))
        if rg:
            figs.append(score("rg -i -c -F (files by matching lines)", w,
                              rg_ranker(rg, corpus), rows,
                              "rg -i -c -F -g '*.md' -e WORD... (one process per query)"))
        for ok, label, make in ((have_bm25, "rank-bm25 (BM25Okapi)", rank_bm25),
                                (have_tantivy, "tantivy", tantivy_ranker)):
            if not ok:
                continue
            t0 = time.perf_counter()
            ranker = make(paths, texts)
            build = time.perf_counter() - t0
            figs.append(score(label, w, ranker, rows, f"{label} over the index's "
                              f"{len(texts)} chunks, in-process", build_s=round(build, 2)))
        if process_queries:
            figs.append(_kbase_process(corpus, rows[:process_queries]))
    if not rg:
        notes.append("rg: not available, skipped")
    if not have_bm25:
        notes.append("rank-bm25: not available, skipped")
    if not have_tantivy:
        notes.append("tantivy: not available, skipped")
    return figs, notes
