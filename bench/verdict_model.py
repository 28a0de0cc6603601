"""Could a small model over cheap features tell hard absent topics from answers, out of
sample? `python -m bench.verdict_model FEATURES [--tiers static,transformer]`.

FEATURES: the cache bench/verdict_features.py writes (every question of
bench/search_targets.py, its first hits with what the verdict reads and more). Each rule
below is fitted leave one vault out, as bench/confidence.py fits the shipped one: for
each vault, on the other vaults (the model tiers together), and reported on it ("out of
sample") beside the rule fitted on every vault ("in sample"). The objective is the
shipped one's: balanced accuracy (the mean of "answerable answered" and "absent not
answered") averaged over vaults and tiers. The rules:

- `shipped`: evidence.RULE and verdict.decide as they are (nothing fitted here);
- `veto <feature>`: the shipped verdict, and the one feature on the verdict's hit (the
  first of the first three hits that is `low` or better) or the query past a threshold
  (feature, side and threshold chosen in the fold);
- `veto LR: <family>`: the shipped verdict, and a logistic regression over a family of
  features above a threshold (both fitted in the fold, on the questions the shipped rule
  answers): agreement between the rankers, the rarest query terms, margins and gaps,
  all of them; `capped`: a threshold that costs any fitting vault more than `CAP` of its
  answerable questions is not a candidate (the shipping bar, applied in the fold);
- `LR: all`, `tree 2: all`: a logistic regression / a depth-2 tree over every feature
  and the shipped verdict itself, in its place (it may answer what the rule does not).

The features are bench/verdict_features.py's (`features`, `FAMILIES`).

"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.search_targets import VAULTS
from bench.verdict_features import ALL, FAMILIES, Row, features, shipped

Predict = Callable[[Row], bool]
VETO_SINGLE = ALL
L2 = 0.01
"""The logistic regressions' L2 penalty (features standardised, weights summing to 1;
0.001 and 0.1 gave the same picture: docs/query.md)."""
CAP = 0.02
"""`capped` rules: a threshold may not cost more than this share of the answerable
questions of any vault it is fitted on (one in 50)."""


def rates(rows: Sequence[Row], ok: Predict) -> tuple[float, float]:
    """(answerable answered, absent not answered)."""
    ans = [r for r in rows if r["answers"]]
    absent = [r for r in rows if not r["answers"]]
    return sum(map(ok, ans)) / len(ans), sum(not ok(r) for r in absent) / len(absent)


def kinds(rows: Sequence[Row], ok: Predict) -> Counter[str]:
    """Absent questions not answered (`<kind>`) and asked (`<kind>/`), by kind."""
    out: Counter[str] = Counter()
    for r in rows:
        if not r["answers"]:
            kind = r["kind"].removeprefix("absent-") if "-" in r["kind"] else "absent"
            out[kind + "/"] += 1
            out[kind] += not ok(r)
    return out


def _kinds_text(c: Counter[str]) -> str:
    return ", ".join(f"{k} {c[k]}/{c[k + '/']}" for k in ("far", "near", "hard", "absent")
                     if c[k + "/"])


def score(groups: Sequence[Sequence[Row]], ok: Predict) -> float:
    return sum(sum(rates(g, ok)[:2]) / 2 for g in groups) / len(groups)


def _weights(groups: Sequence[Sequence[Row]]) -> list[float]:
    """Each (group, class) weighs the same in total: balanced accuracy's own weighting."""
    out = []
    for g in groups:
        n = {True: sum(bool(r["answers"]) for r in g), False: sum(not r["answers"] for r in g)}
        out += [1.0 / (2 * max(n[bool(r["answers"])], 1) * len(groups)) for r in g]
    return out


def _threshold(groups: Sequence[Sequence[Row]], base: Predict,
               value: Callable[[Row], float], cap: float | None = None) -> Predict:
    """`base` and value >= t, t chosen by the objective (ties: the lowest t); `cap`: no
    group may lose more than that share of its answerable questions to the shipped
    rule."""
    cands = sorted({value(r) for g in groups for r in g})
    before = [rates(g, shipped)[0] for g in groups]
    best, best_t = -1.0, -math.inf
    for t in [-math.inf, *cands]:
        ok = lambda r, t=t: base(r) and value(r) >= t  # noqa: E731
        if cap is not None and any(a - rates(g, ok)[0] > cap + 1e-9
                                   for a, g in zip(before, groups, strict=True)):
            continue
        got = score(groups, ok)
        if got > best + 1e-12:
            best, best_t = got, t
    return lambda r: base(r) and value(r) >= best_t


def _signed(name: str, side: float) -> Callable[[Row], float]:
    return lambda r: side * float(r["_f"][name])


def fit_single(groups: Sequence[Sequence[Row]], names: Sequence[str]) -> Predict:
    """The shipped verdict with the best one-feature veto (feature, side, threshold)."""
    best: tuple[float, Predict] = (score(groups, shipped), shipped)
    for name in names:
        for side in (1.0, -1.0):
            ok = _threshold(groups, shipped, _signed(name, side))
            got = score(groups, ok)
            if got > best[0] + 1e-12:
                best = (got, ok)
    return best[1]


def logistic(x: Any, y: Any, w: Any, l2: float = L2) -> Any:
    """Weighted L2 logistic regression by Newton steps; x (standardised) has a bias
    column last, the weights sum to 1."""
    import numpy as np

    beta = np.zeros(x.shape[1])
    reg = np.full(x.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        grad = x.T @ (w * (p - y)) + reg * beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return beta


def fit_lr(groups: Sequence[Sequence[Row]], names: Sequence[str], veto: bool,
           cap: float | None = None) -> Predict:
    import numpy as np

    rows = [r for g in groups for r in g]
    w = np.array(_weights(groups))
    keep = np.array([shipped(r) or not veto for r in rows])
    x = np.array([[r["_f"][n] for n in names] for r in rows])
    mean, std = x[keep].mean(0), x[keep].std(0) + 1e-9
    xs = np.hstack([(x - mean) / std, np.ones((len(rows), 1))])
    y = np.array([1.0 if r["answers"] else 0.0 for r in rows])
    beta = logistic(xs[keep], y[keep], w[keep])

    def value(r: Row) -> float:
        v = (np.array([r["_f"][n] for n in names]) - mean) / std
        return float(v @ beta[:-1] + beta[-1])

    return _threshold(groups, shipped if veto else (lambda r: True), value, cap)


def fit_tree(groups: Sequence[Sequence[Row]], names: Sequence[str]) -> Predict:
    """A depth-2 tree: a split, and in each half a split, each leaf answers or not by
    the objective (exhaustive over each feature's values, fitted greedily)."""
    weights = dict(zip((id(r) for g in groups for r in g), _weights(groups), strict=True))

    def leaf(rows: Sequence[Row]) -> bool:
        return _err(rows, weights, True) <= _err(rows, weights, False)

    def split(rows: Sequence[Row]) -> tuple[str, float] | None:
        best: tuple[float, tuple[str, float] | None] = (_err(rows, weights, leaf(rows)), None)
        for n in names:
            for t in _cuts([r["_f"][n] for r in rows]):
                lo = [r for r in rows if r["_f"][n] < t]
                hi = [r for r in rows if r["_f"][n] >= t]
                e = _err(lo, weights, leaf(lo)) + _err(hi, weights, leaf(hi))
                if e < best[0] - 1e-12:
                    best = (e, (n, t))
        return best[1]

    rows = [r for g in groups for r in g]
    top = split(rows)
    if top is None:
        yes = leaf(rows)
        return lambda r: yes
    n0, t0 = top
    halves: dict[bool, tuple[str | None, float, bool, bool]] = {}
    for side, part in ((False, [r for r in rows if r["_f"][n0] < t0]),
                       (True, [r for r in rows if r["_f"][n0] >= t0])):
        s = split(part)
        if s is None:
            halves[side] = (None, 0.0, leaf(part), leaf(part))
        else:
            lo = [r for r in part if r["_f"][s[0]] < s[1]]
            hi = [r for r in part if r["_f"][s[0]] >= s[1]]
            halves[side] = (s[0], s[1], leaf(lo), leaf(hi))

    def predict(r: Row) -> bool:
        n, t, lo, hi = halves[r["_f"][n0] >= t0]
        return hi if n is not None and r["_f"][n] >= t else lo

    return predict


def _cuts(values: Sequence[float], n: int = 20) -> list[float]:
    """At most `n` thresholds, at the values' quantiles (a tree on a few hundred rows
    overfits every distinct value)."""
    vals = sorted(set(values))
    if len(vals) <= n:
        return vals[1:]
    return sorted({vals[round(i * (len(vals) - 1) / n)] for i in range(1, n)})


def _err(rows: Sequence[Row], weights: dict[int, float], yes: bool) -> float:
    return sum(weights[id(r)] for r in rows if bool(r["answers"]) != yes)


def _lr_rule(names: Sequence[str]) -> Callable[[Sequence[Sequence[Row]]], Predict]:
    return lambda g: fit_lr(g, names, True)


RULES: dict[str, Callable[[Sequence[Sequence[Row]]], Predict]] = {
    "shipped": lambda g: shipped,
    "veto: one feature": lambda g: fit_single(g, VETO_SINGLE),
    **{f"veto LR: {fam}": _lr_rule(names) for fam, names in FAMILIES.items()},
    "veto LR: all": lambda g: fit_lr(g, ALL, True),
    "veto LR: all, capped": lambda g: fit_lr(g, ALL, True, CAP),
    "LR: all": lambda g: fit_lr(g, (*ALL, "shipped"), False),
    "tree 2: all": lambda g: fit_tree(g, (*ALL, "shipped")),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("features", type=Path)
    ap.add_argument("--tiers", default="static,transformer")
    args = ap.parse_args(argv)
    tiers = args.tiers.split(",")
    data = [d for d in json.loads(args.features.read_text(encoding="utf-8"))
            if d["tier"] in tiers]
    for d in data:
        for r in d["rows"]:
            r["_f"] = features(r)
    vaults = sorted({d["vault"] for d in data}, key=VAULTS.index)
    summary, detail = [], []
    for name, fit in RULES.items():
        inside = fit([d["rows"] for d in data])
        ins, outs, drops, total = [], [], [], Counter[str]()
        for vault in vaults:
            held = fit([d["rows"] for d in data if d["vault"] != vault])
            for d in (d for d in data if d["vault"] == vault):
                ai, bi = rates(d["rows"], inside)
                ao, bo = rates(d["rows"], held)
                ins.append((ai + bi) / 2)
                outs.append((ao + bo) / 2)
                drops.append(rates(d["rows"], shipped)[0] - ao)
                got = kinds(d["rows"], held)
                total += got
                detail.append(f"| {name} | {vault} | {d['tier']} | {ai:.2f} / {ao:.2f} | "
                              f"{bi:.2f} / {bo:.2f} | {_kinds_text(got)} |")
        summary.append(f"| {name} | {sum(ins) / len(ins):.3f} | {sum(outs) / len(outs):.3f}"
                       f" | {max(drops) * 100:+.0f} | {_kinds_text(total)} |")
    print("| rule | balanced accuracy: in sample | out of sample | largest drop in "
          "answerable answered, out of sample (points) | absent not answered by kind, out "
          "of sample (every held-out vault and tier) |")
    print("| --- | --- | --- | --- | --- |")
    print("\n".join(summary))
    print()
    print("| rule | held-out vault | tier | answerable answered: in / out of sample | "
          "absent not answered: in / out | absent by kind, out of sample |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(detail))
    return 0


if __name__ == "__main__":
    sys.exit(main())
