"""Print the cost of "did you mean" suggestions: difflib vs rapidfuzz over many names.

Usage: python -m bench.suggest [VAULT] [--queries 300]

Names are the note titles of VAULT (default /tmp/kbase-bench/gen10k, made by
`python -m bench.generate`), or 10,000 generated titles when it does not exist. Queries
are titles with a word dropped or a typo, the kind of damage a broken link shows.
Both libraries score with the same measure family (difflib `SequenceMatcher.ratio`,
rapidfuzz `fuzz.ratio`, normalised Indel similarity) and the same 0.6 cutoff.
"""

from __future__ import annotations

import argparse
import difflib
import random
import time
from pathlib import Path
from typing import Any

_WORDS = ["cache", "raft", "quorum", "index", "query", "shard", "deadlock", "kafka", "socket",
          "schema", "vacuum", "pipeline", "lease", "model", "gradient", "helm", "ingress",
          "token", "audit", "release", "tuning", "debugging", "designing", "notes", "draft",
          "cheatsheet", "runbook", "overview", "basics"]


def load_names(vault: Path | None, count: int = 10_000) -> list[str]:
    if vault is not None and vault.is_dir():
        return sorted({p.stem for p in vault.rglob("*.md") if ".git" not in p.parts})
    rng = random.Random(42)
    names: set[str] = set()
    while len(names) < count:
        names.add(" ".join(rng.choice(_WORDS).title() for _ in range(rng.randint(2, 5)))
                  + f" {rng.randint(1, 999)}")
    return sorted(names)


def damaged(names: list[str], n: int) -> list[tuple[str, str]]:
    """(damaged name, original) pairs."""
    rng = random.Random(7)
    out: list[tuple[str, str]] = []
    for name in rng.sample(names, n):
        words = name.split()
        if len(words) > 2 and rng.random() < 0.5:
            del words[rng.randrange(len(words))]
            out.append((" ".join(words), name))
        else:
            i = rng.randrange(len(name))
            out.append((name[:i] + rng.choice("aeiouxyz") + name[i + 1:], name))
    return out


def with_difflib(queries: list[str], pool: list[str]) -> list[str | None]:
    out: list[str | None] = []
    for q in queries:
        hit = difflib.get_close_matches(q, pool, n=1, cutoff=0.6)
        out.append(hit[0] if hit else None)
    return out


def with_rapidfuzz(queries: list[str], pool: list[str]) -> list[str | None]:
    from rapidfuzz import fuzz, process

    out: list[str | None] = []
    for q in queries:
        hit = process.extractOne(q, pool, scorer=fuzz.ratio, score_cutoff=60)
        out.append(hit[0] if hit else None)
    return out


def with_rerank(queries: list[str], pool: list[str]) -> list[str | None]:
    """rapidfuzz picks 5 candidates, difflib's ratio orders them (tried; no better)."""
    from rapidfuzz import fuzz, process

    out: list[str | None] = []
    for q in queries:
        top = process.extract(q, pool, scorer=fuzz.ratio, score_cutoff=60, limit=5)
        best = max(top, key=lambda h: difflib.SequenceMatcher(None, q, h[0]).ratio(),
                   default=None)
        out.append(best[0] if best else None)
    return out


def in_check(vault: Path) -> None:
    """Time spent suggesting inside `kbase check --all` (links + sections) on `vault`."""
    from kbase_ci.checks.checker import check_vault
    from kbase_ci.checks.suggestions import Suggester
    from kbase_ci.vault.notefiles import Vault

    spent = [0.0, 0]
    originals = {name: getattr(Suggester, name) for name in ("for_target", "for_anchor")}

    def timed(fn: Any) -> Any:
        def run(*args: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args)
            finally:
                spent[0] += time.perf_counter() - t0
                spent[1] += 1
        return run

    for name, fn in originals.items():  # a bench, not the product
        setattr(Suggester, name, timed(fn))
    try:
        v = Vault(vault)
        check_vault(v, None, select=["links", "sections"])  # warm the parse cache
        spent[:] = [0.0, 0]
        t0 = time.perf_counter()
        report = check_vault(Vault(vault), None, select=["links", "sections"])
        total = time.perf_counter() - t0
    finally:
        for name, fn in originals.items():
            setattr(Suggester, name, fn)
    offered = sum(1 for f in report.findings if f.suggestion)
    print(f"check --all (links, sections), warm cache: {len(report.findings)} findings in "
          f"{total:.2f} s; {spent[1]} suggestion attempts ({offered} offered) took "
          f"{spent[0]:.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("vault", nargs="?", default="/tmp/kbase-bench/gen10k")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--no-difflib", action="store_true", help="skip difflib (about a minute)")
    args = ap.parse_args()
    if (Path(args.vault) / ".git").exists():
        in_check(Path(args.vault))
    names = load_names(Path(args.vault))
    pool = [n.lower() for n in names]
    pairs = damaged(names, args.queries)
    queries = [q.lower() for q, _ in pairs]
    wanted = [orig.lower() for _, orig in pairs]
    t0 = time.perf_counter()
    from rapidfuzz import fuzz, process  # noqa: F401  (import cost reported separately)
    t_import = time.perf_counter() - t0
    print(f"names={len(pool)} queries={len(queries)} rapidfuzz import={t_import * 1e3:.1f} ms")
    results = {}
    runs = [("rapidfuzz", with_rapidfuzz), ("rf+rerank", with_rerank)]
    if not args.no_difflib:
        runs.append(("difflib", with_difflib))
    for label, fn in runs:
        t0 = time.perf_counter()
        one = fn(queries[:1], pool)
        t_one = time.perf_counter() - t0
        t0 = time.perf_counter()
        results[label] = fn(queries, pool)
        t_all = time.perf_counter() - t0
        print(f"{label:9s} one suggestion: {t_one * 1e3:8.1f} ms   "
              f"{len(queries)} suggestions: {t_all:8.2f} s   "
              f"({t_all / len(queries) * 1e3:.2f} ms each)   first={one[0]!r}   "
              f"original found: {sum(a == b for a, b in zip(results[label], wanted, strict=True))}"
              f"/{len(queries)}")
    for label in ("rapidfuzz", "rf+rerank") if "difflib" in results else ():
        same = sum(a == b for a, b in zip(results["difflib"], results[label], strict=True))
        print(f"{label} gives difflib's answer: {same}/{len(queries)}")


if __name__ == "__main__":
    main()
