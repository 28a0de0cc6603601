"""How often a query's "no note named X; did you mean ..." names the note meant.

Usage: python -m bench.name_suggest [--per-vault 200] [--seed 29]

Cases from the shared vaults' own note titles (kbase_ci.query.namesearch):
- `concept`: one word of a title of two or more words, inflected the way an agent types
  a concept (`Hash Function` -> `hashing`, `Page Table` -> `pages`): the note;
- `slip`: the whole title with one typing slip (bench.typos): the note;
- `unwritten`: a title of another vault this one lacks: no suggestion is right.
A case counts as found when the note is among the (at most 3) names offered, and as
first when it leads them. The old rule (one name, rapidfuzz WRatio >= 50) is measured
beside the new one; `--sweep` prints the new rule for other `SLIP` cut-offs, each vault
scored with the cut-off chosen on the other three (leave one vault out).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench.typos import VAULTS, load, slip
from kbase_ci.query import namesearch
from kbase_ci.query.namesearch import Named

Rule = Callable[[str, namesearch.NameIndex], list[str]]


@dataclass(frozen=True)
class Case:
    kind: str
    query: str
    title: str


def _inflect(word: str, rng: random.Random) -> str:
    low = word.lower()
    if low.endswith("e"):
        return low[:-1] + "ing" if rng.random() < 0.5 else low + "s"
    return low + rng.choice(("ing", "s", "es" if low.endswith(("s", "x", "h")) else "s"))


def cases(notes: Sequence[Named], per: int, rng: random.Random) -> list[Case]:
    titles = sorted({n.title for n in notes})
    multi = [t for t in titles if len([w for w in t.split() if w.isalpha()]) >= 2]
    out: list[Case] = []
    for title in rng.sample(multi, min(per, len(multi))):
        words = [w for w in title.split() if w.isalpha() and len(w) >= 4]
        if words:
            out.append(Case("concept", _inflect(rng.choice(words), rng), title))
    for title in rng.sample(titles, min(per, len(titles))):
        if len(title) >= 6:
            out.append(Case("slip", slip(rng, title), title))
    return out


def unwritten(notes: Sequence[Named], others: Sequence[str], per: int,
              rng: random.Random) -> list[Case]:
    """Titles of another vault that this one lacks: nothing is right, so any suggestion
    counts as wrong (`title` is empty)."""
    mine = {n.title.lower() for n in notes}
    pool = sorted({t for t in others if t.lower() not in mine})
    return [Case("unwritten", t, "") for t in rng.sample(pool, min(per // 2, len(pool)))]


def old_rule(text: str, index: namesearch.NameIndex) -> list[str]:
    from rapidfuzz import process

    best = process.extractOne(text, list(index.names), score_cutoff=50)
    return [index.names[best[0]]] if best else []


def new_rule(text: str, index: namesearch.NameIndex) -> list[str]:
    return index.suggest(text)


def score(rule: Rule, notes: namesearch.NameIndex, cs: Sequence[Case]
          ) -> dict[str, list[int]]:
    """kind -> [cases, found, first]; for `unwritten`: [cases, suggested, suggested]."""
    out: dict[str, list[int]] = {}
    for c in cs:
        got = rule(c.query, notes)
        row = out.setdefault(c.kind, [0, 0, 0])
        row[0] += 1
        hit = bool(got) if not c.title else c.title in got
        row[1] += hit
        row[2] += bool(got) and (not c.title or got[0] == c.title)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-vault", type=int, default=200)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--cover-sweep", action="store_true",
                    help="the new rule for other COVER values, all vaults together")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    data: dict[str, tuple[namesearch.NameIndex, list[Case]]] = {}
    for name in VAULTS:
        vault = load(name, parse=name != "tldr-pages")
        if vault is None:
            continue
        notes = [Named(n.title, n.aliases, tuple(h.text for h in n.headings))
                 for n in vault.notes]
        data[name] = (namesearch.NameIndex(notes), cases(notes, args.per_vault, rng))
    titles = {name: [n.title for n in index.notes] for name, (index, _cs) in data.items()}
    for name, (index, cs) in data.items():
        others = [t for o, ts in titles.items() if o != name for t in ts]
        cs.extend(unwritten(index.notes, others, args.per_vault, rng))
    print(f"{'vault':24} {'kind':8} {'n':>4}  {'old found':>9} {'first':>6}  "
          f"{'new found':>9} {'first':>6}")
    for name, (notes, cs) in data.items():
        old, new = score(old_rule, notes, cs), score(new_rule, notes, cs)
        for kind in sorted(new):
            n, f_old, a_old = old[kind]
            _, f_new, a_new = new[kind]
            print(f"{name:24} {kind:8} {n:4d}  {f_old:9d} {a_old:6d}  {f_new:9d} {a_new:6d}",
                  flush=True)
    if args.cover_sweep:
        print("\nCOVER  concept found/first  slip first  unwritten suggested (all vaults)")
        for cover in (0.0, 0.3, 0.4, 0.5, 0.6, 0.7):
            namesearch.COVER = cover
            tot: dict[str, list[int]] = {}
            for _name, (index, cs) in data.items():
                for kind, row in score(new_rule, index, cs).items():
                    acc = tot.setdefault(kind, [0, 0, 0])
                    for i, v in enumerate(row):
                        acc[i] += v
            c, sl, u = tot.get("concept", [0, 0, 0]), tot["slip"], tot["unwritten"]
            print(f"{cover:5.1f}  {c[1]:5d}/{c[2]:<5d} of {c[0]:<4d}  {sl[2]:5d} of {sl[0]:<4d}"
                  f"  {u[1]:5d} of {u[0]}")
        namesearch.COVER = 0.5
    if args.sweep:
        cutoffs = (75, 80, 85, 90, 95)
        table: dict[tuple[str, int], int] = {}
        for cut in cutoffs:
            namesearch.SLIP = cut
            for name, (notes, cs) in data.items():
                got = score(new_rule, notes, cs)
                table[(name, cut)] = sum(row[2] for row in got.values())  # first
        print("\nleave one vault out: SLIP chosen on the others, `first` on the held-out")
        for name in data:
            best = max(cutoffs, key=lambda c: (sum(table[(o, c)] for o in data if o != name),
                                               -abs(c - 80)))
            print(f"{name:24} chosen {best}: first {table[(name, best)]}; "
                  + ", ".join(f"{c}: {table[(name, c)]}" for c in cutoffs))


if __name__ == "__main__":
    main()
