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
    ap.add_argument("--loose-sweep", action="store_true",
                    help="the floor of the loose rule (LOOSE): chosen on these cases, "
                         "reported on bench.typos' link cases")
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
    if args.loose_sweep:
        loose_sweep(data, args.per_vault, args.seed)
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


FLOORS = (50, 60, 70, 75, 80, 85, 90, 95, 101)
"""LOOSE values swept (101: the loose rule off)."""


def _loose_cases(data: dict[str, tuple[namesearch.NameIndex, list[Case]]]
                 ) -> list[tuple[str, str, str, float]]:
    """Per case: (kind, the title meant ("" for none), what the rules before the loose one
    offer first ("" for nothing), and when they offer nothing, the loose rule's best
    title and score): every LOOSE floor is then a comparison, not a new search."""
    from rapidfuzz import fuzz, process

    out = []
    for index, cs in data.values():
        keys = list(index.names)
        for c in cs:
            got = index.suggest(c.query, loose=None)
            if got:
                out.append((c.kind, c.title, got[0], 101.0))
                continue
            best = process.extractOne(c.query, keys, scorer=fuzz.WRatio)
            out.append((c.kind, c.title, index.names[best[0]] if best else "",
                        float(best[1]) if best else -1.0))
    return out


def _at(rows: list[tuple[str, str, str, float]], floor: int) -> tuple[int, int, int, int]:
    """(right first, wrong first, loose right, loose wrong) at LOOSE = `floor`."""
    right = wrong = loose_right = loose_wrong = 0
    for _kind, meant, first, score in rows:
        loose = score <= 100
        if not first or (loose and score < floor):
            continue
        ok = bool(meant) and first == meant
        right += ok
        wrong += not ok
        loose_right += loose and ok
        loose_wrong += loose and not ok
    return right, wrong, loose_right, loose_wrong


def typo_cases(per: int, seed: int) -> dict[str, tuple[namesearch.NameIndex, list[Case]]]:
    """bench.typos' note cases as query names (another typo set): `typo` and `rename`
    (the note meant), and `unwritten` names (nothing is right: a held-out note, a name
    of another vault); the name index lacks the held-out notes, as the link cases do."""
    from bench import typos

    rng = random.Random(seed)
    vaults = [v for name in VAULTS if (v := load(name, parse=name != "tldr-pages"))]
    out: dict[str, tuple[namesearch.NameIndex, list[Case]]] = {}
    for vault in vaults:
        made = typos.cases(vault, [o for o in vaults if o is not vault], per, rng)
        held = {c.link[2:-2] for c in made if c.held_out}
        titles = {n.path: n.title for n in vault.notes}
        cs = [Case(c.kind, c.link[2:-2], titles[c.expected] if c.expected else "")
              for c in made if c.kind in ("typo", "rename", "unwritten")
              and "/" not in c.link and "#" not in c.link
              and (c.expected is None or c.expected in titles)]
        notes = [Named(n.title, n.aliases, tuple(h.text for h in n.headings))
                 for n in vault.notes if n.title not in held]
        out[vault.name] = (namesearch.NameIndex(notes), cs)
    return out


def loose_sweep(data: dict[str, tuple[namesearch.NameIndex, list[Case]]], per: int,
                seed: int) -> None:
    """LOOSE chosen on this bench's cases (most right names first less wrong ones), then
    reported on another typo set: bench.typos' link cases asked as names."""
    fit, other = _loose_cases(data), _loose_cases(typo_cases(per, seed))
    print("\nLOOSE floor: right first / wrong first (of them by the loose rule: right / wrong)")
    print(f"{'floor':>6}  {'fit set (these cases, ' + str(len(fit)) + ')':>34}  "
          f"{'report set (bench.typos names, ' + str(len(other)) + ')':>40}")
    for floor in FLOORS:
        a, b = _at(fit, floor), _at(other, floor)
        label = "off" if floor > 100 else str(floor)
        print(f"{label:>6}  {a[0]:7d} / {a[1]:5d} ({a[2]:4d} / {a[3]:4d}){'':9}"
              f"{b[0]:7d} / {b[1]:5d} ({b[2]:4d} / {b[3]:4d})")
    best = max(FLOORS, key=lambda f: (_at(fit, f)[0] - _at(fit, f)[1], -f))
    b = _at(other, best)
    print(f"chosen on the fit set (right - wrong): {'off' if best > 100 else best}; "
          f"report set there: {b[0]} right, {b[1]} wrong first "
          f"(loose rule: {b[2]} right, {b[3]} wrong)")


if __name__ == "__main__":
    main()
