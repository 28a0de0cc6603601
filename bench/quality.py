"""Retrieval quality: recall@5, MRR@10, nDCG@10 of bm25, semantic and hybrid on every set
in ../shared/corpora/qa/ (bench/query_quality.py's `scores`), plus the tldr hard subset and
the cross-language sets (qa/README.md). The corpora are shared with the peer-search
group: each is copied into a scratch git repo and indexed once (`query_quality._view`),
and that build is timed: the tldr build is the slowest step of the suite, so it runs
once."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import query_quality
from bench.figure import clock, once
from bench.workloads import QA
from kbase_ci.typedjson import encode

VAULT_SETS = ("obsidian-tasks-docs", "data-engineering-wiki")


@dataclass
class Indexed:
    name: str
    view: Any
    repo: Path
    seconds: float
    cpu: float


@dataclass
class Corpora:
    """Lazily built views under `work` (a scratch folder the caller removes)."""

    work: Path
    built: dict[str, Indexed] = field(default_factory=dict)

    def get(self, name: str) -> Indexed:
        if name not in self.built:
            wall, cpu, view = clock(lambda: query_quality._view(name, self.work))
            self.built[name] = Indexed(name, view, self.work / name, wall, cpu)
        return self.built[name]


def load_rows(name: str) -> list[dict[str, Any]]:
    return query_quality.load_jsonl(QA / f"{name}.jsonl")


def sample(rows: list[dict[str, Any]], limit: int, seed: int = 0) -> list[dict[str, Any]]:
    """A seeded sample in file order (0 = all rows)."""
    if limit <= 0 or limit >= len(rows):
        return rows
    keep = set(random.Random(seed).sample(range(len(rows)), limit))
    return [r for i, r in enumerate(rows) if i in keep]


def tldr_hard(limit: int) -> list[dict[str, Any]]:
    return [{**r, "kind": "example (hard subset)"}
            for r in sample(query_quality.hard_rows(), limit)]


def tldr_xlang(limit: int) -> list[dict[str, Any]]:
    """Cross-language queries twice: the translated page as answer, then the English one."""
    rows = sample(load_rows("tldr-xlang"), limit)
    same = [{**r, "kind": "translated -> same-language page"} for r in rows]
    english = [{**r, "kind": "translated -> English page", "answers": r["en_answers"]}
               for r in rows if r.get("en_answers")]
    return same + english


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
        sampled = ", seeded sample" if limit or "tldr" in set_name else ""
        command = (f"bench.query_quality.scores on qa/{set_name}.jsonl "
                   f"({len(rows)} queries{sampled})")
        scored = query_quality.scores(corpora.get(corpus).view, rows)
        if len({s["kind"] for s in scored}) > 1:  # a whole-set line
            scored += query_quality.whole(scored)
        figs += [{"name": s["mode"], "workload": f"{set_name} / {s['kind']}", "n": s["n"],
                  **{k: round(s[k], 3) for k in ("recall@5", "mrr@10", "ndcg@10")},
                  "command": command} for s in scored]
    builds = [once("full index build with the model (once)", c.name, c.seconds, c.cpu,
                   f"build_index(copy of corpora/{c.name}/vault, model=minilm-static-256)",
                   counts=encode(c.view.manifest.counts))
              for c in corpora.built.values()]
    return figs, builds, notes
