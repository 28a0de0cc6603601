"""Issue 27's and 37's target tables: `python -m bench.search_targets [--work DIR]
[--tiers ...] [--vaults ...] [--json OUT]`.

Every figure comes from the library the `kbase search` command calls
(`search_answer`, on the view the CLI opens: equal by construction) in a `git clone
--single-branch` of a published index (`workloads.published_clone`: the index only in
FETCH_HEAD, as an agent meets the vault; kept under `--work` and reused), per
vault and tier: `static` (../shared/models/minilm-static-256),
`transformer` (../shared/models/minilm-l6-onnx) and `bm25` (the static tier's clone
with no model here: hybrid then ranks by BM25 alone, as an agent's clone without the
model does).

Questions (`questions`): for obsidian-tasks-docs, data-engineering-wiki, dnd-5e-srd,
vaultofknowledge and dendron-site the hand-written sets of ../shared/corpora/qa/
(`natural-*`: 40-50 answerable, by kind, see its README; `absent-*`: 30 no note answers,
kinds far, near and hard); tldr-pages, which has neither,
is its English pages only (`pages/`, 7,425 notes) with 100 questions of its known-answer
set's hard subset (tldr-en.jsonl: kind example, unique answer, not naming the command,
English page; seeded sample), bench/data/paraphrases-tldr-pages.jsonl (30) and
bench/data/absent-tldr-pages.jsonl (62 absent topics, not split by kind).

Printed, per vault and tier: nDCG@10 of the ranking (every hit) and of what the command
shows, per question kind and mode (bm25, semantic, hybrid); the verdict: answerable
questions answered (exit 0) and absent ones not answered (exit 1), by kind; and how many
hits of every answer (every mode) carry a higher confidence than a hit ranked above them
(`above`: 0 by construction since issue 37). The out-of-sample verdict figures (each
vault held out of a fit) are bench/confidence.py's, frozen at 58d6498 (docs/query.md).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.query_quality import MODES, hard_rows, load_jsonl, ndcg
from bench.query_quality import TIERS as MODELS
from bench.workloads import CORPORA, QA, ROOT, published_clone

DATA = ROOT / "bench" / "data"
TIERS = ("static", "transformer", "bm25")
"""`bm25`: the static tier's clone without its model."""
VAULTS = ("obsidian-tasks-docs", "data-engineering-wiki", "dnd-5e-srd", "vaultofknowledge",
          "dendron-site", "tldr-pages")
NATURAL = VAULTS[:5]
"""The vaults with shared natural and absent sets."""
TARGET_MEAN = VAULTS[:3]
"""The natural sets issue 27's nDCG means (static 0.848, transformer 0.891) are over."""
ONLY = {"tldr-pages": "pages"}
"""The folder of a vault that is indexed (tldr-pages: its English pages)."""
TLDR_EXAMPLES = 100
LIMIT = 10
NO_MODEL = "the index's model is not here (bench: a clone without it)"


def questions(vault: str, typos: bool = False) -> list[dict[str, Any]]:
    """The vault's questions (see the module docstring); absent ones have kind
    `absent-<kind>` and no answers. `typos`: the natural set with a misspelt word in each
    question instead (bench/data/typos-<vault>.jsonl, made by bench/search_typos.py at 58d6498)."""
    if typos:
        return load_jsonl(DATA / f"typos-{vault}.jsonl")
    if vault == "tldr-pages":
        hard = [r for r in hard_rows() if r["answers"][0].startswith("pages/")]
        rows = [dict(r, kind="example")
                for r in random.Random(0).sample(hard, TLDR_EXAMPLES)]
        rows += load_jsonl(DATA / "paraphrases-tldr-pages.jsonl")
        rows += [dict(r, kind="absent", answers=[])
                 for r in load_jsonl(DATA / "absent-tldr-pages.jsonl")]
        return rows
    return load_jsonl(QA / f"natural-{vault}.jsonl") + [
        dict(r, kind=f"absent-{r['kind']}", answers=[])
        for r in load_jsonl(QA / f"absent-{vault}.jsonl")]


def model_kwargs(view: Any, tier: str) -> dict[str, Any]:
    """What `search_answer` is given for `tier` in its clone: the model with its embedder
    loaded once, or (`bm25`) the notice that it is not here."""
    from kbase_ci.query.searcher import Searcher

    model = MODELS["static" if tier == "bm25" else tier]
    if tier == "bm25":
        return {"model": model, "model_notice": NO_MODEL}
    return {"model": model, "embedder": Searcher(view, model).embedder()[0]}


DONE = "fresh-clone-done"
"""Written last into a finished clone's folder."""


def clone_of(work: Path, vault: str, tier: str) -> Path:
    """The published index's clone for `tier`, built once under `work` (a finished one,
    marked by `DONE`, is reused: builds with the transformer take minutes)."""
    model = MODELS["static" if tier == "bm25" else tier]
    base = work / ("static" if tier == "bm25" else tier) / vault
    if not (base / DONE).is_file():
        published_clone(CORPORA / vault / "vault", base, ["--model", str(model)],
                        only=ONLY.get(vault, ""))
        (base / DONE).write_text("", encoding="utf-8")
    return base / "clone"


def open_view(clone: Path) -> Any:
    """The view `kbase search` opens in `clone` (kbase_ci.cli.queryrun.open_view)."""
    from kbase_ci.query.view import QueryView
    from kbase_ci.scope.source import open_index_source
    from kbase_ci.vault.notefiles import Vault

    vault = Vault(clone, untracked=True)
    return QueryView(vault, open_index_source(vault, None, None))


@dataclass
class Outcome:
    """One question asked in one mode."""

    ranking: list[str]
    shown: list[str]
    answered: bool
    above: int = 0
    """Hits labelled above a hit ranked before them."""


@dataclass
class Asked:
    kind: str
    answers: list[str]
    modes: dict[str, Outcome] = field(default_factory=dict)


class Runner:
    """Asks questions as `kbase search` does."""

    def __init__(self, view: Any, tier: str) -> None:
        self.view, self.tier = view, tier
        self.models = model_kwargs(view, tier)

    def ask(self, query: str, mode: str) -> Outcome:
        from kbase_ci.query.search import search_answer

        got = search_answer(self.view, query, mode=mode, limit=LIMIT, concise=True,
                            **self.models)
        paths = [h.path for h in got.results]
        return Outcome(paths, paths, bool(got.verdict.answered),
                       above([h.confidence for h in got.results]))


def above(labels: list[str]) -> int:
    """How many of `labels` (best first: high, medium, low, none) are higher than one
    before them."""
    order = ("high", "medium", "low", "none")
    worst, out = 0, 0
    for label in labels:
        rank = order.index(label)
        out += rank < worst
        worst = max(worst, rank)
    return out


def ask_all(work: Path, vault: str, tier: str, typos: bool = False) -> list[Asked]:
    runner = Runner(open_view(clone_of(work, vault, tier)), tier)
    modes = ("hybrid",) if tier == "bm25" else MODES
    out = []
    for row in questions(vault, typos):
        asked = Asked(row["kind"], list(row["answers"]))
        for mode in modes:
            if not asked.answers and mode != "hybrid":
                continue  # absent topics: only the command's default answer counts
            asked.modes[mode] = runner.ask(row["query"], mode)
        out.append(asked)
    return out


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def summarise(vault: str, tier: str, asked: list[Asked]) -> dict[str, Any]:
    """The figures of one vault and tier (see the module docstring)."""
    answerable = [a for a in asked if a.answers]
    absent = [a for a in asked if not a.answers]
    kinds: dict[str, list[Asked]] = defaultdict(list)
    for a in answerable:
        kinds[a.kind].append(a)
    kinds["all"] = answerable
    rows = {}
    for kind, group in sorted(kinds.items()):
        row: dict[str, Any] = {"n": len(group)}
        for mode in group[0].modes:
            row[mode] = _mean([ndcg(a.modes[mode].ranking, a.answers) for a in group])
        row["shown"] = _mean([ndcg(a.modes["hybrid"].shown, a.answers) for a in group])
        rows[kind] = row
    absent_kinds: dict[str, list[Asked]] = defaultdict(list)
    for a in absent:
        absent_kinds[a.kind].append(a)
    absent_kinds["absent (all)"] = absent
    return {
        "vault": vault, "tier": tier, "ndcg": rows,
        "answered": sum(a.modes["hybrid"].answered for a in answerable),
        "answerable": len(answerable),
        "answered_by_kind": {k: [sum(a.modes["hybrid"].answered for a in g), len(g)]
                             for k, g in sorted(kinds.items()) if k != "all"},
        "rejected": {k: [sum(not a.modes["hybrid"].answered for a in g), len(g)]
                     for k, g in sorted(absent_kinds.items())},
        "above": sum(o.above for a in asked for o in a.modes.values()),
        "answers": sum(len(a.modes) for a in asked),
    }


def print_table(figures: list[dict[str, Any]]) -> None:
    print("| vault | tier | kind | n | bm25 | semantic | hybrid | shown |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for f in figures:
        for kind, r in f["ndcg"].items():
            cells = [f"{r[m]:.3f}" if m in r else "" for m in ("bm25", "semantic")]
            print(f"| {f['vault']} | {f['tier']} | {kind} | {r['n']} | {' | '.join(cells)} | "
                  f"{r['hybrid']:.3f} | {r['shown']:.3f} |")
    print()
    print("| vault | tier | answerable answered | by kind | absent not answered: far | "
          "near | hard | all | labelled above a hit ranked higher |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for f in figures:
        rej = f["rejected"]
        kinds = ", ".join(f"{k} {a}/{n}" for k, (a, n) in
                          f.get("answered_by_kind", {}).items())
        cells = ["{}/{}".format(*rej[k]) if k in rej else "" for k in
                 ("absent-far", "absent-near", "absent-hard", "absent (all)")]
        print(f"| {f['vault']} | {f['tier']} | {f['answered']}/{f['answerable']} | {kinds} | "
              + " | ".join(cells) + f" | {f.get('above', '')} hits ({f.get('answers', '')} "
              "answers) |")
    print()
    for tier in TIERS:
        for name, vaults in (("issue 27's three", TARGET_MEAN), ("every natural set", NATURAL)):
            natural = [f["ndcg"]["all"]["hybrid"] for f in figures
                       if f["tier"] == tier and f["vault"] in vaults]
            if natural:
                print(f"{tier}: hybrid nDCG@10, mean of {name} ({len(natural)}): "
                      f"{_mean(natural):.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kbase-search-targets"),
                    help="the clones (built once, reused)")
    ap.add_argument("--tiers", default=",".join(TIERS))
    ap.add_argument("--vaults", default=",".join(VAULTS))
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--typos", action="store_true",
                    help="ask the natural sets with a misspelt word (bench/data/typos-*.jsonl)")
    ap.add_argument("--from-json", type=Path, action="append", default=[],
                    help="print the table of figures written before (--json), asking nothing")
    args = ap.parse_args(argv)
    if args.from_json:
        print_table([f for path in args.from_json
                     for f in json.loads(path.read_text(encoding="utf-8"))])
        return 0
    figures = []
    for tier in args.tiers.split(","):
        for vault in args.vaults.split(","):
            figures.append(summarise(vault, tier, ask_all(args.work, vault, tier,
                                                          args.typos)))
            print(f"{vault} {tier}: done", file=sys.stderr, flush=True)
    print_table(figures)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
