"""docs/benchmarks.md from results.json: methodology, machine, one table per group, what
the numbers mean for a user, and the charts (bench/charts.py). Every number in the page
comes from the results; the page names the command that produced them.

`python -m bench.report RESULTS.json DOC.md` re-renders without re-measuring.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

Col = tuple[str, Callable[[dict[str, Any]], Any]]
HAND = "<!-- Written by hand from here on: bench/report.py keeps it when it re-renders. -->"


def _num(x: Any, digits: int = 3) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.{digits}g}" if abs(x) < 1000 else f"{x:,.0f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def _time(f: dict[str, Any]) -> str:
    unit = f.get("unit", "")
    if f.get("min") is not None and f.get("n", 1) > 1:
        return (f"{_num(f['median'])} {unit} ({_num(f['min'])}–{_num(f['max'])}, "
                f"n={f['n']})")
    return f"{_num(f['median'])} {unit}"


def _cpu(f: dict[str, Any]) -> str:
    return "–" if f.get("cpu") is None else f"{_num(f['cpu'])} {f.get('unit', '')}"


def table(rows: Sequence[dict[str, Any]], cols: Sequence[Col]) -> list[str]:
    out = ["| " + " | ".join(h for h, _ in cols) + " |",
           "|" + "|".join("---" for _ in cols) + "|"]
    for r in rows:
        cells = [str(fn(r)).replace("|", "\\|").replace("\n", " ") for _, fn in cols]
        out.append("| " + " | ".join(cells) + " |")
    return [*out, ""]


TIME_COLS: list[Col] = [("figure", lambda f: f["name"]), ("workload", lambda f: f["workload"]),
                        ("median wall (min–max, n)", _time), ("CPU (median)", _cpu)]
QUALITY_COLS: list[Col] = [("set / kind", lambda f: f["workload"]), ("mode", lambda f: f["name"]),
                           ("queries", lambda f: f["n"]),
                           ("recall@5", lambda f: f"{f['recall@5']:.3f}"),
                           ("MRR@10", lambda f: f"{f['mrr@10']:.3f}"),
                           ("nDCG@10", lambda f: f"{f['ndcg@10']:.3f}")]

INTRO = {
    "precommit": "What a commit costs. `kbase check` runs as a pre-commit hook on the staged "
                 "notes; the hook's overhead is measured against a no-op hook in the same "
                 "`pre-commit run`, so pre-commit's own start-up cancels out.",
    "index": "`kbase index` on the generated vault: a full build with a cold and a warm parse "
             "cache (split by stage; worker stage seconds are summed over shards and can "
             "exceed the wall time), an incremental build after one note of the largest shard "
             "changed, the "
             "artifact size against the vault's Markdown (raw and zlib-compressed, which is "
             "what git stores), and peak memory.",
    "query": "Whole-process times of the real `kbase` command in a fresh `git clone` that "
             "has the index only on `origin/kbase-index`, as an agent finds it. The first "
             "query also materialises the index branch. MCP figures are warm round trips "
             "to a running `kbase mcp` server (no process start per call).",
    "quality": "Known-answer retrieval on `../shared/corpora/qa/` (qa/README.md): a query "
               "counts as found when any listed answer note is in the top 5 (recall@5); "
               "MRR@10 and nDCG@10 reward ranking it higher. `hybrid` fuses BM25 and the "
               "static embedding model (minilm-static-256).",
    "peers-search": "The same queries on the same corpus copy with the tools an agent or "
                    "developer would otherwise use. `rg` is what an agent does without an "
                    "index: one process per query with the query's words (stop words "
                    "dropped), files ranked by matching lines. rank-bm25 and tantivy index "
                    "kbase's own chunks (best chunk per note). Latency is per query: "
                    "in-process for kbase, rank-bm25 and tantivy, one process for `rg` and "
                    "for the whole-process `kbase search` line.",
    "peers-links": "Broken-link checking against the Markdown link checkers from npm. "
                   "**Neither peer reads `[[wikilinks]]`, `![[embeds]]`, `#heading` or "
                   "`#^block` anchors in wikilinks**, so on an Obsidian vault they miss most "
                   "broken links by design. `missed vs kbase` counts kbase findings the peer "
                   "does not report (same file and line for remark; per file for "
                   "markdown-link-check, which prints no line numbers). External URLs are "
                   "not checked (offline run). The generated vault has a known number of "
                   "deliberately broken links.",
    "peers-vectors": "The chunk embeddings of the generated vault's index (all shards in one "
                     "matrix) searched three ways: exact float32 numpy (the reference), "
                     "kbase's exact scan of the 4-bit matrix it ships, and usearch's HNSW "
                     "graph (f16), the obvious approximate library; queries are embedded "
                     "note titles. recall@10 is the overlap with the reference top 10. kbase "
                     "scans each shard (a few thousand rows) per query; here one matrix "
                     "holds every shard, so its time is an upper bound.",
    "compare": "This tree against an earlier commit (`--against`) in one run "
               "(bench/compare.py): each side has its own git copy of a real vault and its "
               "own index, built by its own code; every workload alternates the two sides "
               "(A B A B), and the ratio (this tree / the other) is the median of the pairs' "
               "ratios of whole-process CPU, so the machine's load hits both alike. "
               "`hook`: `check --staged` of a new edit of the most linked note; "
               "`rename-*`: of a staged rename of it, with or without the parse cache; "
               "`cold-check`: `check --all` without the cache; `parse`: the parser alone.",
    "scaling": "How each cost grows with vault size (generated vaults, same seed): cold "
               "`kbase check --all`, index builds, artifact size and peak memory.",
}


def _machine(r: dict[str, Any]) -> list[str]:
    m = r["machine"]
    cores = m.get("cores") or 1
    start, end = m.get("load_start") or [], m.get("load_end") or []
    # The load at the end includes the suite's own work (it uses both cores), so only the
    # load before it started says whether something else was running.
    busy = max([*start[:1], 0.0]) > cores * 0.75
    lines = [
        f"- CPU: {m['cpu']}, {m['cores']} cores, {_num(m.get('memory_gb'))} GB RAM; {m['os']}",
        f"- Python {m['python']}; {m.get('git') or 'git ?'}; node {m.get('node') or 'absent'}",
        f"- Date {m['date']}, commit `{m['commit']}`; the run took "
        f"{_num(r.get('duration_s'))} s",
        f"- Load average (1/5/15 min) at start {start}, at end {end}.",
    ]
    if busy:
        lines.append("- **The machine was shared during this run** (the load before it "
                     "started was near or above the core count: other jobs were running), "
                     "so wall times "
                     "are pessimistic and noisy; CPU times, shown next to them, are less "
                     "affected. Compare figures within one table: they ran at the same time.")
    vers = m.get("versions") or {}
    lines += ["", "<details><summary>Installed Python distributions "
              f"({len(vers)})</summary>", "",
              ", ".join(f"{k} {v}" for k, v in vers.items()), "", "</details>", ""]
    return lines


def _group_lines(name: str, g: dict[str, Any], img: Path, doc: Path) -> list[str]:
    from bench import charts

    out = [f"## {name}", "", INTRO.get(name, ""), ""]
    if g["status"] != "ok":
        out += [f"**{g['status']}**: " + "; ".join(g.get("notes") or []), ""]
        return out
    figs = g["figures"]
    if name in ("precommit", "query", "scaling"):
        out += table(figs, TIME_COLS)
    elif name == "index":
        out += table(figs, [("figure", lambda f: f["name"]), ("value", _time), ("CPU", _cpu),
                            ("detail", _index_detail)])
    elif name == "quality":
        out += table([f for f in figs if f.get("kind") != "build"], QUALITY_COLS)
        builds = [f for f in figs if f.get("kind") == "build"]
        if builds:
            out += ["Index builds of the real corpora (each built once):", ""]
            out += table(builds, [("corpus", lambda f: f["workload"]),
                                  ("notes", lambda f: _num((f.get("counts") or {})
                                                           .get("notes"))),
                                  ("wall", _time), ("CPU", _cpu)])
        out += _img(lambda: charts.quality(
            [f for f in figs if f.get("workload", "").endswith("/ all")
             or "tldr" in f.get("workload", "") if f.get("kind") != "build"],
            "nDCG@10 by set and mode", img / "quality.png"), doc, "quality chart")
    elif name == "peers-search":
        out += table(figs, [("workload", lambda f: f["workload"]), ("tool", lambda f: f["name"]),
                            ("recall@5", lambda f: _num(f.get("recall@5"))),
                            ("MRR@10", lambda f: _num(f.get("mrr@10"))),
                            ("nDCG@10", lambda f: _num(f.get("ndcg@10"))),
                            ("ms per query: median (min–max)", _time),
                            ("index build", lambda f: f"{f['build_s']} s" if "build_s" in f
                             else "–")])
        last = sorted({f["workload"] for f in figs if "recall@5" in f})
        target = next((w for w in last if w.startswith("tldr")), last[-1] if last else None)
        out += _img(lambda: charts.latency([f for f in figs if f["workload"] == target],
                                           f"search latency, {target}",
                                           img / "latency-search.png"),
                    doc, "search latency chart")
    elif name == "peers-links":
        out += table(figs, [("vault", lambda f: f["workload"]), ("tool", lambda f: f["name"]),
                            ("reads wikilinks", lambda f: "yes" if f["reads_wikilinks"]
                             else "**no**"),
                            ("broken links reported", lambda f: f["reports"]),
                            ("known broken", lambda f: _num(f.get("known_broken"))),
                            ("missed vs kbase", lambda f: f["missed_vs_kbase"]),
                            ("reported, not by kbase", lambda f: _num(f.get("not_in_kbase"))),
                            ("wall", _time), ("CPU", _cpu)])
    elif name == "compare":
        out += table(figs, [("workload", lambda f: f["name"]), ("vault", lambda f: f["workload"]),
                            ("this tree, CPU (min–max, n)", _time),
                            ("earlier commit, CPU", lambda f: f"`{f['ref']}`: "
                             f"{_num(f['against'])} s"),
                            ("ratio", lambda f: _num(f.get("ratio"))),
                            ("MB/s", lambda f: _num(f.get("mb_per_s")))])
    elif name == "peers-vectors":
        out += table(figs, [("method", lambda f: f["name"]), ("workload", lambda f: f["workload"]),
                            ("recall@10", lambda f: f"{f['recall@10']:.3f}"),
                            ("ms per query: median (min–max)", _time),
                            ("index build", lambda f: f"{f['build_s']} s" if "build_s" in f
                             else "–")])
    if name == "scaling":
        out += _growth(figs)
        out += _img(lambda: charts.scaling(figs, img / "scaling.png"), doc, "scaling chart")
    notes = g.get("notes") or []
    if notes:
        out += ["Notes: " + "; ".join(notes), ""]
    cmds = sorted({f["command"] for f in figs if f.get("command")})
    if cmds:
        out += ["<details><summary>Commands</summary>", ""]
        out += [f"- `{c}`" for c in cmds] + ["", "</details>", ""]
    return out


def _growth(figs: list[dict[str, Any]]) -> list[str]:
    """Each cost divided by the previous size's, next to the growth in notes: 5x the notes
    at 5x the cost is linear."""
    by: dict[str, dict[int, float]] = {}
    for f in figs:
        if "notes" in f and isinstance(f.get("median"), int | float):
            by.setdefault(f["name"], {})[int(f["notes"])] = float(f["median"])
    sizes = sorted({n for v in by.values() for n in v})
    if len(sizes) < 2:
        return []
    steps = list(pairwise(sizes))
    cols = " | ".join(f"{a:,} -> {b:,} notes ({b / a:.0f}x)" for a, b in steps)
    out = ["How each cost grows (ratio of the larger vault's figure to the smaller's):", "",
           f"| cost | {cols} |", "|---|" + "---|" * len(steps)]
    for name, pts in by.items():
        cells = [f"{pts[b] / pts[a]:.1f}x" if pts.get(a) and b in pts else "–"
                 for a, b in steps]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return [*out, ""]


def _index_detail(f: dict[str, Any]) -> str:
    if "stages" in f:
        return ", ".join(f"{k} {v}" for k, v in f["stages"].items() if k != "total")
    if "ratio" in f:
        return (f"{f['ratio']}x the Markdown ({f['markdown_mb']} MB); zlib: "
                f"{f['zlib_mb']} MB, {f['zlib_ratio']}x")
    if "workers_mb" in f:
        return f"workers: {f['workers_mb']} MB"
    return ""


def _img(draw: Callable[[], Path | None], doc: Path, alt: str) -> list[str]:
    """The Markdown of the chart `draw` makes (a note when matplotlib is not installed)."""
    try:
        chart = draw()
    except ImportError:
        chart = None
    if chart is None:
        return ["(chart not drawn: matplotlib is not installed or there is no data)", ""]
    rel = chart.relative_to(doc.parent) if chart.is_relative_to(doc.parent) else chart
    return [f"![{alt}]({rel.as_posix()})", ""]


def render(results: dict[str, Any], doc: Path, img: Path) -> Path:
    from bench.summary import highlights

    lines = ["# Benchmarks", "",
             f"Generated from `results.json` by `{results['command']}` (bench/run.py, "
             "bench/report.py); do not edit by hand: re-run the command. "
             f"Date {results['machine']['date']}, commit `{results['machine']['commit']}`.",
             ""]
    for u in results.get("updates", []):
        lines += [f"Groups {', '.join(u['groups'])} were re-measured by `{u['command']}` "
                  f"({u['date']}, load average {u['load'][0]} -> {u['load'][1]}).", ""]
    lines += ["## What this means for you", ""]
    lines += [*highlights(results), ""]
    lines += ["## Methodology", "",
              "- One command runs every group; each group's figures and the command line "
              "that measured them are in `results.json` next to the machine line.",
              f"- Timings: median of {results['plan']['repeat']} runs after one warm-up run, "
              "with min and max; CPU time (user+system of the process and its children) "
              "next to wall time. One-off costs (full builds, cold runs) are measured once.",
              "- Inputs are deterministic: generated vaults from `bench.generate` with seed 42 "
              "(cached under the out dir), the real corpora and question sets in "
              "`../shared/corpora` (copied into scratch git repositories, never changed), "
              "seeded samples of the large question sets.",
              "- Peers run in the same process of the same run, on the same inputs, so ratios "
              "compare like with like; a peer that cannot be installed is skipped with a note.",
              "", "## Machine", ""]
    lines += _machine(results)
    for name, g in results["groups"].items():
        lines += _group_lines(name, g, img, doc)
    # The sections written by hand below the marker (one-off measurements of an issue,
    # what bench may import, the frozen scripts) outlive a re-render.
    old = doc.read_text(encoding="utf-8") if doc.is_file() else ""
    tail = "\n" + old[old.index(HAND):] if HAND in old else ""
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text("\n".join(lines).rstrip() + "\n" + tail, encoding="utf-8")
    return doc


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__)
    ap.add_argument("results", type=Path, help="a results.json of `python -m bench`")
    ap.add_argument("doc", type=Path, help="the Markdown page (its charts go to img/ beside)")
    args = ap.parse_args()
    target = args.doc.resolve()
    render(json.loads(args.results.read_text(encoding="utf-8")), target, target.parent / "img")
