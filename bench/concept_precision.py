"""Precision of `kbase gaps` concepts: `python -m bench.concept_precision [--write]`.

For each shared vault, in a fresh clone (bench/freshclone.py), `kbase gaps --kind concept
--min-notes 1` lists every undocumented term the extraction keeps; 50 of them are drawn
with a fixed seed (from the list sorted by key) and looked up in the judgements committed
in bench/data/concepts-VAULT.tsv, one term per line:

    key <TAB> name <TAB> verdict <TAB> why

`y`: the term names one thing of the vault's domain (a product, a technique, an API
identifier, a rule, a game term) that a note or a glossary entry could document.
`n`: it does not (a value, a placeholder, a sentence fragment, two things glued by
"and", a capitalised phrase of another language). Precision = y / judged.

The default listing (`--min-notes 3`, the first 20) is judged from the same file and
reported beside it, with its noise (the `n` among them: issue 31's target is <= 10%).
`--write` appends the terms a sample draws that have no judgement yet, with verdict `?`,
for a person to fill in; a run prints which are missing.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.freshclone import fresh_clone, kbase
from bench.workloads import CORPORA

VAULTS = ("obsidian-tasks-docs", "data-engineering-wiki", "dnd-5e-srd", "tldr-pages")
DATA = Path(__file__).resolve().parent / "data"
SAMPLE = 50
SEED = 23
TOP = 20


def judgements(vault: str) -> dict[str, tuple[str, str, str]]:
    """key -> (name, verdict, why) from bench/data/concepts-VAULT.tsv."""
    path = DATA / f"concepts-{vault}.tsv"
    out: dict[str, tuple[str, str, str]] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                key, name, verdict, why = [*line.split("\t"), "", "", ""][:4]
                out[key] = (name, verdict, why)
    return out


def sample(concepts: list[dict[str, Any]], size: int = SAMPLE) -> list[dict[str, Any]]:
    ordered = sorted(concepts, key=lambda c: c["key"])
    picks = sorted(random.Random(SEED).sample(range(len(ordered)), min(size, len(ordered))))
    return [ordered[i] for i in picks]


def _concepts(clone: Path, *args: str) -> list[dict[str, Any]]:
    proc = kbase("gaps", "--kind", "concept", "--max-tokens", "0", *args, cwd=clone)
    found: list[dict[str, Any]] = json.loads(proc.stdout)["concepts"]
    return found


def _score(items: list[dict[str, Any]], judged: dict[str, tuple[str, str, str]]
           ) -> tuple[int, int, list[dict[str, Any]]]:
    verdicts = [judged.get(c["key"], ("", "?", ""))[1] for c in items]
    missing = [c for c, v in zip(items, verdicts, strict=True) if v not in ("y", "n")]
    return verdicts.count("y"), verdicts.count("y") + verdicts.count("n"), missing


def measure(vault: str, work: Path, write: bool) -> dict[str, Any]:
    clone = fresh_clone(vault, work)
    population = _concepts(clone, "--min-notes", "1", "--limit", "100000")
    drawn = sample(population)
    top = _concepts(clone, "--limit", str(TOP))
    judged = judgements(vault)
    yes, total, missing = _score(drawn, judged)
    top_yes, top_total, top_missing = _score(top, judged)
    if write and (missing or top_missing):
        path = DATA / f"concepts-{vault}.tsv"
        new = {c["key"]: c for c in (*missing, *top_missing)}
        with path.open("a", encoding="utf-8") as f:
            for key, c in sorted(new.items()):
                f.write(f"{key}\t{c['name']}\t?\t{c['places'][0]['sentence']}\n")
    return {"vault": vault, "population": len(population), "sampled": len(drawn),
            "judged": total, "yes": yes, "precision": yes / total if total else None,
            "top_judged": top_total, "top_yes": top_yes,
            "missing": sorted({c["key"] for c in (*missing, *top_missing)})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vaults", nargs="+", default=list(VAULTS))
    parser.add_argument("--work", type=Path, default=None,
                        help="scratch folder (default: a temporary one)")
    parser.add_argument("--write", action="store_true",
                        help="append unjudged terms to the judgement files as `?`")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kbase-concepts-") as tmp:
        work = args.work or Path(tmp)
        print("| vault | terms listed | sampled | judged y / n | precision | default top "
              f"{TOP}: y / judged | top {TOP} noise |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for vault in args.vaults:
            if not (CORPORA / vault / "vault").is_dir():
                print(f"| {vault} | (not in ../shared/corpora) | | | | | |")
                continue
            r = measure(vault, work, args.write)
            prec = f"{r['precision']:.0%}" if r["precision"] is not None else "-"
            noise = r["top_judged"] - r["top_yes"]
            share = f"{noise / r['top_judged']:.0%}" if r["top_judged"] else "-"
            print(f"| {vault} | {r['population']} | {r['sampled']} | {r['yes']} / "
                  f"{r['judged'] - r['yes']} | {prec} | {r['top_yes']} / {r['top_judged']} "
                  f"| {noise} ({share}) |")
            if r["missing"]:
                print(f"  unjudged in {vault}: {', '.join(r['missing'])}", file=sys.stderr)
    print(f"(seed {SEED}, {SAMPLE} terms per vault from `kbase gaps --kind concept "
          "--min-notes 1`, judgements in bench/data/concepts-*.tsv)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
