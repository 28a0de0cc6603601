"""Retrieval quality: recall@5, MRR@10, nDCG@10 of bm25, semantic and hybrid on every set
in ../shared/corpora/qa/ (bench/query_quality.py's `scores`), plus the tldr hard subset and
the cross-language sets (qa/README.md)."""

from __future__ import annotations

from typing import Any

from bench import query_quality
from bench.corpora import Corpora, load_rows, sample, tldr_hard, tldr_xlang
from bench.figure import once
from kbase_ci.typedjson import encode

VAULT_SETS = ("obsidian-tasks-docs", "data-engineering-wiki")


def _rows_figures(rows: list[dict[str, Any]], set_name: str, scored: list[dict[str, Any]],
                  command: str) -> list[dict[str, Any]]:
    figs = [{"name": s["mode"], "workload": f"{set_name} / {s['kind']}", "n": s["n"],
             "recall@5": round(s["recall@5"], 3), "mrr@10": round(s["mrr@10"], 3),
             "ndcg@10": round(s["ndcg@10"], 3), "command": command} for s in scored]
    kinds = {s["kind"] for s in scored}
    if len(kinds) > 1:  # a whole-set line, weighted by each kind's query count
        for mode in query_quality.MODES:
            part = [s for s in scored if s["mode"] == mode]
            n = sum(s["n"] for s in part)
            figs.append({"name": mode, "workload": f"{set_name} / all", "n": n,
                         **{k: round(sum(s[k] * s["n"] for s in part) / n, 3)
                            for k in ("recall@5", "mrr@10", "ndcg@10")},
                         "command": command})
    return figs


def measure(corpora: Corpora, *, limit: int, tldr: int, xlang: int
            ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """(quality figures, corpus index-build figures, notes)."""
    figs: list[dict[str, Any]] = []
    notes: list[str] = []
    plan: list[tuple[str, str, list[dict[str, Any]]]] = [
        (name, name, sample(load_rows(name), limit)) for name in VAULT_SETS]
    if tldr:
        plan.append(("tldr-pages", "tldr-en", tldr_hard(tldr)))
    else:
        notes.append("tldr hard subset not run (--tldr 0)")
    if xlang:
        plan.append(("tldr-pages", "tldr-xlang", tldr_xlang(xlang)))
    else:
        notes.append("cross-language tldr set not run (--xlang 0)")
    for corpus, set_name, rows in plan:
        view = corpora.get(corpus).view
        sampled = ", seeded sample" if limit or "tldr" in set_name else ""
        command = (f"bench.query_quality.scores on qa/{set_name}.jsonl "
                   f"({len(rows)} queries{sampled})")
        figs.extend(_rows_figures(rows, set_name, query_quality.scores(view, rows), command))
    builds = [once("full index build with the model (once)", c.name, c.seconds, c.cpu,
                   f"build_index(copy of corpora/{c.name}/vault, model=minilm-static-256)",
                   counts=encode(c.view.manifest.counts))
              for c in corpora.built.values()]
    return figs, builds, notes
