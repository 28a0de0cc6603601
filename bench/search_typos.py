"""Typos in search questions: `python -m bench.search_typos [--make] [--reach]`.

`--make` writes bench/data/typos-<vault>.jsonl for the five vaults with shared natural
sets: each answerable question of ../shared/corpora/qa/natural-<vault>.jsonl with one of
its content words (four letters or more, not a frame word of kbase_ci.query.framewords)
replaced by a real misspelling of it, from codespell's list of English misspellings
(`codespell_lib/data/dictionary.txt`, the pip package codespell; `abandonned->abandoned`):
the word and the misspelling are chosen with a generator seeded by the question's id,
and a question none of whose words codespell lists is left out. `bench.search_targets
--typos` asks them as it asks the natural sets.

`--reach` checks kbase_ci.query.misspell's distance rule on codespell's whole list (a set
the sets above are not drawn from by word): how many of its misspellings of words of
each length lie within the rule's reach of the word meant (`misspell.reach`, the first
letter kept), and, for the words of every shared vault's index (--work: the clones of
bench.search_targets), how many misspellings of a word the vault holds `misspell.near`
reads as that word, as another, or as none, and how many English words the vault does
not hold (codespell's corrections) have a near word in it, and how many of those the
English list (`misspell.english`) does not hold: the words that only the context rule
(`misspell.read`) keeps from being read as something else.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from bench.search_targets import DATA, NATURAL, QA, _load

WORD = re.compile(r"[A-Za-z]+")


def misspellings() -> dict[str, list[str]]:
    """codespell's misspellings of each English word (lower case, letters only)."""
    import codespell_lib

    out: dict[str, list[str]] = defaultdict(list)
    path = Path(codespell_lib.__file__).parent / "data" / "dictionary.txt"
    for line in path.read_text(encoding="utf-8").splitlines():
        typo, _, fixes = line.partition("->")
        fix = fixes.split(",")[0].strip()
        if typo.isalpha() and fix.isalpha() and typo.islower() and fix.islower():
            out[fix].append(typo)
    return out


def make(vault: str, slips: dict[str, list[str]]) -> list[dict[str, Any]]:
    from kbase_ci.query.framewords import frame_words

    frame = frame_words("english")
    rows = []
    for row in _load(QA / f"natural-{vault}.jsonl"):
        words = [m for m in WORD.finditer(row["query"]) if len(m[0]) >= 4
                 and m[0].lower() not in frame and m[0].lower() in slips]
        if not words:
            continue
        pick = random.Random(row["id"])
        m = pick.choice(words)
        typo = pick.choice(sorted(slips[m[0].lower()]))
        if m[0][0].isupper():
            typo = typo[0].upper() + typo[1:]
        query = row["query"][:m.start()] + typo + row["query"][m.end():]
        rows.append({"id": row["id"] + "-typo", "corpus": vault, "kind": row["kind"],
                     "query": query, "answers": row["answers"], "word": m[0],
                     "typo": typo})
    return rows


def reach_table(slips: dict[str, list[str]], work: Path) -> None:
    from rapidfuzz.distance import DamerauLevenshtein

    from kbase_ci.query import misspell

    pairs = [(t, f) for f, ts in slips.items() for t in ts]
    by: dict[str, Counter[str]] = defaultdict(Counter)
    for typo, fix in pairs:
        size = "under 4" if len(typo) < 4 else "4-7" if len(typo) < 8 else "8+"
        dist = DamerauLevenshtein.distance(typo, fix)
        by[size]["all"] += 1
        by[size]["first letter kept"] += typo[0] == fix[0]
        by[size]["within reach"] += typo[0] == fix[0] and 0 < dist <= misspell.reach(typo)
    print("| letters | misspellings | first letter kept | within reach of the rule |")
    print("| --- | --- | --- | --- |")
    for size in ("under 4", "4-7", "8+"):
        c = by[size]
        print(f"| {size} | {c['all']} | {c['first letter kept'] / c['all']:.3f} | "
              f"{c['within reach'] / c['all']:.3f} |")
    print()
    print("| vault | index terms | misspellings of its words: read as it / as another / "
          "none | English words it lacks with a near word: all / not in the English list |")
    print("| --- | --- | --- | --- |")
    for vault in NATURAL:
        vocab = _vocabulary(work, vault)
        print(f"| {vault} | {len(vocab)} | {_outcomes(pairs, vocab)} |")


def _vocabulary(work: Path, vault: str) -> dict[str, int]:
    from bench.search_targets import clone_of, open_view

    view = open_view(clone_of(work, vault, "static"))
    got: dict[str, int] = {}
    for model in (view.source.reader.bm25(s) for s in view.source.reader.shards):
        if model is not None:
            for term, df in model.starting(""):
                got[term] = got.get(term, 0) + df
    return got


def _outcomes(pairs: list[tuple[str, str]], vocab: dict[str, int]) -> str:
    from kbase_ci.index.tokens import stemmer
    from kbase_ci.query import misspell

    stem = stemmer("english")
    buckets: dict[str, dict[str, int]] = defaultdict(dict)
    for term, df in vocab.items():
        buckets[term[:1]][term] = df
    sample = random.Random(0)
    held = [(t, f) for t, f in pairs if stem(f) in vocab and stem(t) not in vocab]
    lacked = sorted({f for _, f in pairs if stem(f) not in vocab})
    held = sample.sample(held, min(2000, len(held)))
    lacked = sample.sample(lacked, min(2000, len(lacked)))
    got: Counter[str] = Counter()
    for typo, fix in held:
        near = misspell.near(typo, stem(typo), buckets[typo[:1]], stem)
        best = min(near, key=lambda u: (near[u][0], -vocab[u], u)) if near else None
        got["right" if best == stem(fix) else "none" if best is None else "wrong"] += 1
    near = [w for w in lacked if misspell.near(w, stem(w), buckets[w[:1]], stem)]
    foreign = [w for w in near if not misspell.english(w)]
    n = len(held)
    return (f"{got['right'] / n:.3f} / {got['wrong'] / n:.3f} / {got['none'] / n:.3f} "
            f"({n}) | {len(near) / len(lacked):.3f} / {len(foreign) / len(lacked):.3f} "
            f"({len(lacked)})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", action="store_true", help="write bench/data/typos-*.jsonl")
    ap.add_argument("--reach", action="store_true", help="check the rule on codespell")
    ap.add_argument("--work", type=Path, default=Path("/tmp/kbase-search-targets"))
    args = ap.parse_args(argv)
    slips = misspellings()
    if args.make:
        for vault in NATURAL:
            rows = make(vault, slips)
            (DATA / f"typos-{vault}.jsonl").write_text(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                encoding="utf-8")
            print(f"{vault}: {len(rows)} questions", file=sys.stderr)
    if args.reach:
        reach_table(slips, args.work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
