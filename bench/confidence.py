"""Calibrating search confidence: `python -m bench.confidence [--sets NAME...] [--work DIR]`.

Does `kbase search` say "not found" when a vault has nothing on a topic, and answer when
it does? Per shared vault, with and without vectors (../shared/models/minilm-static-256):
- answerable questions: the vault's known-answer set in ../shared/corpora/qa/ (tldr-pages:
  a seeded sample of the hard subset and of page summaries; dnd-5e-srd has none, so a
  seeded sample of its own section headings stands in), plus paraphrased questions
  (fixtures/query/paraphrases-*.jsonl, bench/data/paraphrases-*.jsonl);
- absent topics: bench/data/absent-<vault>.jsonl, 60+ questions about topics the vault
  does not cover (half near its domain, half far from it; each checked against the
  vault's words when written).

"Found" is what the command's exit code says: at least one hit at `low` confidence or
above (exit 0), else exit 1 with `not_found`. Printed per vault and mode: the share of
answerable questions found (recall of "found"), of absent topics found (false alarms),
precision of "found" over both sets, and how often a listed answer is among the hits
kept. `--sweep` also tries other `low` thresholds (the grid in `_grid`), which is how
`evidence.RULE` was chosen: one rule for every vault and both modes, never tuned per
vault. Indexes are kept under `--work` (default: a temp folder) for reruns.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
QA = SHARED / "corpora" / "qa"
DATA = ROOT / "bench" / "data"
MODEL = SHARED / "models" / "minilm-static-256"
SETS = ("obsidian-tasks-docs", "data-engineering-wiki", "dnd-5e-srd", "tldr-pages")
KEEP = 20
"""Hits judged per query (the ranking's first ones, as a search with the default limit
walks them)."""
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@kbase.invalid",
        "-c", "commit.gpgsign=false", "-c", "gc.auto=0"]


@dataclass(frozen=True)
class Case:
    kind: str
    query: str
    answers: frozenset[str]
    absent: bool


@dataclass(frozen=True)
class Hit:
    path: str
    raw: float
    """IDF coverage with unknown words weighted as any other word."""
    cov: float
    sem: float | None
    named: bool
    cosine: float | None
    unknown: float
    """The share of the query's IDF mass in terms no chunk holds."""

    def idf(self, rule: Any) -> float:
        """IDF coverage as `rule` weighs unknown words (`QueryTerms.coverage`)."""
        return float(self.raw / (1 + (rule.unknown_weight - 1) * self.unknown))


def _load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines()
            if ln.strip()]


def _view(corpus: str, work: Path) -> Any:
    from kbase_ci.index.build import build_index
    from kbase_ci.index.reader import open_index
    from kbase_ci.query.discovery import IndexSource
    from kbase_ci.query.view import QueryView
    from kbase_ci.vault.files import Vault

    repo, out = work / corpus, work / f"{corpus}-index"
    if not (repo / ".git").is_dir():
        shutil.rmtree(repo, ignore_errors=True)
        shutil.copytree(SHARED / "corpora" / corpus / "vault", repo)
        for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "corpus"]):
            subprocess.run([*_GIT, *cmd], cwd=repo, check=True)
    vault = Vault(repo)
    build_index(vault, out, model=MODEL)  # incremental: reuses what is there
    return QueryView(vault, IndexSource(open_index(out), "dir", str(out)))


def _headings(view: Any, n: int) -> list[dict[str, Any]]:
    """Section headings of two words or more as questions about their note (a vault
    without a known-answer set)."""
    rows = []
    for info in view.notes.values():
        for level, text, _ in info.headings:
            if level >= 2 and len(text.split()) >= 2:
                rows.append({"kind": "heading", "query": text, "answers": [info.path]})
    rows.sort(key=lambda r: (r["query"], r["answers"][0]))
    return random.Random(0).sample(rows, min(n, len(rows)))


def cases(corpus: str, view: Any, tldr: int) -> list[Case]:
    rows = _load(QA / f"{corpus}.jsonl")
    if corpus == "tldr-pages":
        rows = _load(QA / "tldr-en.jsonl")
        hard = [r for r in rows if r["kind"] == "example" and r.get("unique")
                and not r.get("mentions_command")]
        summary = [r for r in rows if r["kind"] == "summary"]
        rows = (random.Random(0).sample(hard, tldr)
                + random.Random(1).sample(summary, tldr // 4))
    if not rows:
        rows = _headings(view, 300)
    rows += _load(ROOT / "fixtures" / "query" / f"paraphrases-{corpus}.jsonl")
    rows += _load(DATA / f"paraphrases-{corpus}.jsonl")
    out = [Case(r["kind"], r["query"], frozenset(r.get("answers", ())), False) for r in rows]
    out += [Case("absent", r["query"], frozenset(), True)
            for r in _load(DATA / f"absent-{corpus}.jsonl")]
    return out


def features(view: Any, case: Case, mode: str, embedder: Any) -> list[Hit]:
    """The first `KEEP` hits of the ranking with their evidence (no floor)."""
    from kbase_ci.query import verdict
    from kbase_ci.query.evidence import RULE
    from kbase_ci.query.search import rank

    r = rank(view, case.query, mode=mode, model=MODEL, embedder=embedder)
    q = r.searcher.terms(case.query)
    judged = verdict.judge(view, r.searcher, r.fused, q, case.query, set(r.named), [], None,
                           KEEP, floor=False)
    gone = set(r.searcher.unknown(q.terms))
    unknown = sum(q.idf[t] for t in gone) / q.mass if q.mass else 0.0
    plain = RULE._replace(unknown_weight=1.0)
    return [Hit(n.path, q.coverage(e.matched, plain), e.coverage, e.semantic,
                e.named is not None, e.cosine, unknown) for n, e in judged.hits]


def _kept(hits: list[Hit], rule: Any, limit: int = 5) -> list[str]:
    from kbase_ci.query.evidence import level

    kept = [h.path for h in hits
            if level(h.idf(rule), h.cov, h.sem, h.named, rule) is not None]
    return kept[:limit]


def report(label: str, data: list[tuple[Case, list[Hit]]], rule: Any) -> dict[str, float]:
    ans = [(c, h) for c, h in data if not c.absent]
    absent = [(c, h) for c, h in data if c.absent]
    found_ans = sum(bool(_kept(h, rule)) for _, h in ans)
    found_abs = sum(bool(_kept(h, rule)) for _, h in absent)
    right = sum(bool(set(_kept(h, rule)) & c.answers) for c, h in ans if c.answers)
    with_answers = sum(1 for c, _ in ans if c.answers)
    para = [h for c, h in ans if c.kind == "paraphrase"]
    found_para = sum(bool(_kept(h, rule)) for h in para)
    recall = found_ans / len(ans) if ans else 0.0
    false = found_abs / len(absent) if absent else 0.0
    precision = found_ans / (found_ans + found_abs) if found_ans + found_abs else 0.0
    print(f"{label:34} answerable found {found_ans}/{len(ans)} = {recall:.3f}   "
          f"absent found {found_abs}/{len(absent)} = {false:.3f} (exit 1: {1 - false:.3f})   "
          f"precision {precision:.3f}   paraphrases found {found_para}/{len(para)}   "
          f"answer kept {right}/{with_answers}", flush=True)
    return {"recall": recall, "false": false, "precision": precision}


def _grid(base: Any) -> Iterable[Any]:
    """Other `low` thresholds: with and without vectors, the semantic veto and rescue."""
    for low, alone, sure, veto, rescue in itertools.product(
            (0.5, 0.55, 0.6), (0.55, 0.6, 0.65), (0.7, 0.75, 0.85), (0.8, 0.9, 0.95),
            (0.97, 0.99, 1.01)):
        yield base._replace(idf=(base.idf[0], base.idf[1], low), alone=alone, sure=sure,
                            veto=veto, rescue=(base.rescue[0], rescue))


def main() -> None:
    from kbase_ci.query.evidence import RULE
    from kbase_ci.query.search import Searcher

    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", nargs="*", default=list(SETS))
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--tldr", type=int, default=400, help="tldr hard-subset questions")
    ap.add_argument("--sweep", action="store_true", help="try other `low` thresholds")
    ap.add_argument("--dump", type=Path, default=None,
                    help="write every question's hits and evidence to this JSON file")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kbase-confidence-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"rule: {RULE}")
    everything: dict[str, list[tuple[Case, list[Hit]]]] = {}
    try:
        for corpus in args.sets:
            view = _view(corpus, work)
            embedder = Searcher(view, MODEL).embedder()[0]
            todo = cases(corpus, view, args.tldr)
            for mode in ("hybrid", "bm25"):
                data = [(c, features(view, c, mode, embedder)) for c in todo]
                everything[f"{corpus} {mode}"] = data
                report(f"{corpus} {mode}", data, RULE)
        if args.dump is not None:
            args.dump.write_text(json.dumps({
                key: [{"kind": c.kind, "query": c.query, "answers": sorted(c.answers),
                       "absent": c.absent,
                       "hits": [[h.path, h.raw, h.cov, h.sem, h.named, h.cosine, h.unknown]
                                for h in hits]}
                      for c, hits in data] for key, data in everything.items()}))
        if args.sweep:
            print("sweep (worst vault and mode: answerable found, absent exit 1):")
            for rule in _grid(RULE):
                worst = [(report_quiet(d, rule)) for d in everything.values()]
                print(f"  low {rule.idf[2]} alone {rule.alone} sure {rule.sure} veto "
                      f"{rule.veto} rescue {rule.rescue[1]}: answerable "
                      f"{min(w[0] for w in worst):.3f}, absent exit 1 "
                      f"{min(1 - w[1] for w in worst):.3f}")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


def report_quiet(data: list[tuple[Case, list[Hit]]], rule: Any) -> tuple[float, float]:
    ans = [h for c, h in data if not c.absent]
    absent = [h for c, h in data if c.absent]
    return (sum(bool(_kept(h, rule)) for h in ans) / max(1, len(ans)),
            sum(bool(_kept(h, rule)) for h in absent) / max(1, len(absent)))


if __name__ == "__main__":
    main()
