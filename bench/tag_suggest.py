"""How often `kbase tags suggest` suggests a tag the note really has:
`python -m bench.tag_suggest [--vaults A,B] [--work DIR] [--show N]`.

Each shared vault with tags is indexed once (the static model, as bench.query_quality
does); tags are then hidden from one note at a time and ranked as `tags suggest` ranks
them (kbase_ci.query.tagsuggest.rank), with the hidden tags counted nowhere (not the
note's, not in how common a tag is or which tags go together). A suggestion is right
when it is a hidden tag or above one (`rust` for `rust/async`). Two ways to hide:

- all: every tagged note with all its tags hidden (a note not tagged yet);
- one: every note with two or more tags, each tag in turn, the others kept (what the
  command is for: the tags a tagged note lacks).

Printed per vault and way: notes, precision@1 (the first suggestion right),
precision@3 (right ones among the first three, over three) and hit@3; then, with
nothing hidden, how often the first suggestion is an alternative to a tag the note has
(a quarter as many notes have both as chance would give, or fewer; chance giving
one or more). Each for the ranking of
main b6746e9 (`before`: summed votes over 1 + log(notes with the tag)) and the current
one. `--show N` prints N notes whose first suggestion was wrong (way one).
"""

from __future__ import annotations

import argparse
import math
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import query_quality

VAULTS = ("data-engineering-wiki", "obsidian-tasks-docs")
Rank = Callable[[dict[str, float], set[str], dict[str, set[str]]], list[str]]


def _right(tag: str, hidden: set[str]) -> bool:
    return any(tag == t or t.startswith(tag + "/") for t in hidden)


def before(neighbours: dict[str, float], have: set[str], tagsets: dict[str, set[str]]
           ) -> list[str]:
    """The ranking of main b6746e9: summed votes over 1 + log(notes with the tag)."""
    from kbase_ci.query.tagsuggest import _covered

    used = Counter(t for tags in tagsets.values() for t in tags)
    scores: dict[str, float] = {}
    for p, weight in neighbours.items():
        for key in tagsets[p]:
            if not _covered(key, have):
                scores[key] = scores.get(key, 0.0) + weight
    final = {k: v / (1 + math.log(used[k])) for k, v in scores.items()}
    return sorted(final, key=lambda k: (-final[k], k))


def now(neighbours: dict[str, float], have: set[str], tagsets: dict[str, set[str]]
        ) -> list[str]:
    from kbase_ci.query.tagsuggest import rank

    return [r.tag for r in rank(neighbours, have, tagsets)]


def held_out(view: Any, ranking: Rank, way: str) -> list[tuple[str, set[str], list[str]]]:
    """(note, its hidden tags, the suggestions) per held-out case."""
    from kbase_ci.query.tagsuggest import _covered, tag_sets, votes

    tagsets = tag_sets(view)
    out = []
    for path in sorted(tagsets):
        own = tagsets[path]
        if way == "all" and own:
            cases = [own]
        elif way == "one" and len(own) > 1:
            cases = [{t} for t in sorted(own) if not _covered(t, own - {t})]
        else:
            continue
        neighbours = votes(view, path)
        for hidden in cases:
            kept = own - hidden
            got = ranking(neighbours, kept, {**tagsets, path: kept})
            out.append((path, hidden, got))
    return out


def alternative_first(view: Any, ranking: Rank) -> tuple[int, int]:
    """(tagged notes whose first suggestion is an alternative to one of their tags, tagged
    notes with a suggestion): see the module docstring."""
    from kbase_ci.query.tagsuggest import tag_sets, votes

    tagsets = tag_sets(view)
    used = Counter(t for tags in tagsets.values() for t in tags)
    bad = total = 0
    for path, own in sorted(tagsets.items()):
        got = ranking(votes(view, path), own, tagsets) if own else []
        if not got:
            continue
        total += 1
        first = got[0]
        for h in own:
            expected = used[first] * used[h] / len(tagsets)
            both = sum(first in t and h in t for t in tagsets.values())
            if expected >= 1 and both <= expected / 4:
                bad += 1
                break
    return bad, total


def measure(rows: list[tuple[str, set[str], list[str]]]) -> str:
    n = len(rows) or 1
    p1 = sum(bool(g) and _right(g[0], h) for _, h, g in rows) / n
    p3 = sum(sum(_right(t, h) for t in g[:3]) / 3 for _, h, g in rows) / n
    hit3 = sum(any(_right(t, h) for t in g[:3]) for _, h, g in rows) / n
    return f"n {len(rows):4}  p@1 {p1:.3f}  p@3 {p3:.3f}  hit@3 {hit3:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vaults", default=",".join(VAULTS))
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--show", type=int, default=0)
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="kbase-tagsuggest-"))
    try:
        for name in args.vaults.split(","):
            view = query_quality._view(name, work)
            for label, ranking in (("before", before), ("now", now)):
                for way in ("all", "one"):
                    print(f"{name:22} {label:6} {way}  "
                          f"{measure(held_out(view, ranking, way))}")
                bad, total = alternative_first(view, ranking)
                print(f"{name:22} {label:6} alternative first: {bad} of {total} tagged notes")
            wrong = [r for r in held_out(view, now, "one") if not (r[2] and _right(r[2][0], r[1]))]
            for path, hidden, got in wrong[:args.show]:
                print(f"  {path}: hidden {sorted(hidden)}; suggested {got[:3]}")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
