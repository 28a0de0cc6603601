"""The "what this means for you" bullets of docs/benchmarks.md, each built from measured
figures (a bullet whose figures are missing is left out)."""

from __future__ import annotations

from typing import Any


def _find(results: dict[str, Any], group: str, name: str, workload: str = ""
          ) -> dict[str, Any] | None:
    g = results["groups"].get(group) or {}
    for f in g.get("figures", []):
        if f["name"].startswith(name) and workload in f.get("workload", ""):
            found: dict[str, Any] = f
            return found
    return None


def _ms(f: dict[str, Any]) -> str:
    v = float(f["median"]) * (1000 if f.get("unit") == "s" else 1)
    return f"{v:.0f} ms" if v < 2000 else f"{v / 1000:.1f} s"


def highlights(results: dict[str, Any]) -> list[str]:
    out: list[str] = []
    warm = _find(results, "precommit", "`kbase check --staged NOTE`, new edit each run")
    over = _find(results, "precommit", "kbase hook overhead")
    if warm:
        text = f"- **Commits:** checking one newly edited note takes {_ms(warm)}"
        if over:
            text += f"; as a pre-commit hook it adds {_ms(over)} over a no-op hook"
        out.append(text + f" ({warm['workload']}).")
    full = _find(results, "index", "full build, cold")
    inc = _find(results, "index", "incremental")
    size = _find(results, "index", "artifact size")
    if full and inc:
        text = (f"- **Index:** a full build of {full['workload']} takes {_ms(full)}; after "
                f"one note of its largest shard changes, the rebuild takes {_ms(inc)}")
        if size:
            text += (f"; the index is {size['median']} MB ({size['ratio']}x the Markdown, "
                     f"{size['zlib_ratio']}x compressed)")
        out.append(text + ".")
    first = _find(results, "query", "first query")
    bm = _find(results, "query", "search --mode bm25")
    hy = _find(results, "query", "search (hybrid)")
    if first and bm:
        text = (f"- **Queries from a fresh clone:** the first query (which unpacks the "
                f"index branch) takes {_ms(first)}, then a BM25 search {_ms(bm)}")
        if hy:
            text += f" and a hybrid search {_ms(hy)}"
        out.append(text + ", whole process.")
    q = results["groups"].get("peers-search") or {}
    rows = [f for f in q.get("figures", []) if "recall@5" in f]
    tl = sorted({f["workload"] for f in rows if f["workload"].startswith("tldr")})
    if tl:
        w = tl[0]
        by = {f["name"]: f for f in rows if f["workload"] == w}
        kb = by.get("kbase hybrid") or by.get("kbase bm25")
        rg = next((f for n, f in by.items() if n.startswith("rg")), None)
        if kb and rg:
            out.append(f"- **Finding the right page** ({w}): kbase {kb['name'].split()[1]} "
                       f"puts it in the top 5 for {kb['recall@5']:.0%} of queries, "
                       f"`rg` with the query's words for {rg['recall@5']:.0%}.")
    links = results["groups"].get("peers-links") or {}
    for f in links.get("figures", []):
        if f["name"] == "kbase check --all" and f.get("known_broken") is not None:
            peers = [g for g in links["figures"] if g["workload"] == f["workload"]
                     and g["name"] != f["name"]]
            text = (f"- **Link checking** ({f['workload']}, {f['known_broken']} links broken "
                    f"on purpose): kbase reports {f['reports']}")
            text += "".join(f"; {g['name']} {g['reports']}" for g in peers)
            out.append(text + " (the npm checkers do not read wikilinks).")
            break
    vec = results["groups"].get("peers-vectors") or {}
    vf = vec.get("figures", [])
    if len(vf) >= 3:
        out.append(f"- **Vectors:** kbase's exact 4-bit scan takes {vf[1]['median']} ms per "
                   f"query and finds {vf[1]['recall@10']:.0%} of the exact float top 10; "
                   f"float32 numpy takes {vf[0]['median']} ms; usearch's HNSW graph answers "
                   f"in {vf[2]['median']} ms but finds only {vf[2]['recall@10']:.0%} "
                   f"({vf[2]['workload']}).")
    if not out:
        out.append("- No group produced figures in this run.")
    return out
