"""PNG charts for docs/benchmarks.md (matplotlib, Agg backend): scaling per cost, and
search latency and quality of kbase against its peers. Without matplotlib no chart is
drawn and the report says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 100, "savefig.dpi": 100, "font.size": 9,
                         "svg.hashsalt": "kbase", "path.simplify": False})
    return plt


def _save(fig: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    # No timestamp in the PNG: the same numbers give the same file.
    fig.savefig(path, format="png", metadata={"Software": None}, bbox_inches="tight")
    return path


def scaling(figs: list[dict[str, Any]], path: Path) -> Path | None:
    series: dict[str, list[tuple[int, float]]] = {}
    sizes: dict[str, list[tuple[int, float]]] = {}
    for f in figs:
        if "notes" not in f or f["median"] is None:
            continue
        target = sizes if f["unit"] == "MB" else series
        target.setdefault(f["name"], []).append((int(f["notes"]), float(f["median"])))
    if not series:
        return None
    plt = _plt()
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    for name, pts in sorted(series.items()):
        pts.sort()
        a.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    a.set(xscale="log", yscale="log", xlabel="notes", ylabel="seconds (wall)",
          title="time per operation")
    a.legend(fontsize=7)
    for name, pts in sorted(sizes.items()):
        pts.sort()
        b.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    b.set(xscale="log", yscale="log", xlabel="notes", ylabel="MB", title="size and memory")
    b.legend(fontsize=7)
    fig.tight_layout()
    out = _save(fig, path)
    plt.close(fig)
    return out


def latency(rows: list[dict[str, Any]], title: str, path: Path) -> Path | None:
    rows = [r for r in rows if r.get("median") is not None]
    if not rows:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.2))
    names = [r["name"] for r in rows]
    ax.barh(names, [r["median"] for r in rows],
            color=["#2b6cb0" if n.startswith("kbase") else "#a0aec0" for n in names])
    for i, r in enumerate(rows):
        ax.text(r["median"], i, f" {r['median']:.3g} ms", va="center", fontsize=8)
    ax.set(xscale="log", xlabel="median ms per query (log scale)", title=title)
    ax.invert_yaxis()
    fig.tight_layout()
    out = _save(fig, path)
    plt.close(fig)
    return out


def quality(rows: list[dict[str, Any]], title: str, path: Path) -> Path | None:
    """nDCG@10 per set (groups) and tool (bars)."""
    sets = sorted({r["workload"] for r in rows})
    tools = sorted({r["name"] for r in rows})
    if not sets or not tools:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 3.8))
    width = 0.8 / len(tools)
    for j, tool in enumerate(tools):
        ys = [next((r["ndcg@10"] for r in rows if r["workload"] == s and r["name"] == tool),
                   0.0) for s in sets]
        ax.bar([i + j * width for i in range(len(sets))], ys, width, label=tool)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(sets))], sets, fontsize=7)
    ax.set(ylabel="nDCG@10", ylim=(0, 1), title=title)
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    out = _save(fig, path)
    plt.close(fig)
    return out
