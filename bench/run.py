"""`python -m bench`: every benchmark of the project in one run, side by side with the
tools users would otherwise pick. Writes OUT/results.json and renders docs/benchmarks.md
(bench/report.py) with charts under docs/img/.

A group that fails is recorded as an error and the run goes on; a group whose inputs
or peers are missing (no ../shared, no npm, no network) is recorded as skipped with a
note. `--quick` is the smoke run: tiny vaults, one repetition, no installs, and the doc
goes to OUT/ instead of docs/ unless --doc says otherwise.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.figure import clock
from bench.machine import load, machine_info
from bench.workloads import ROOT, WIKILINKED, Generated, corpus_vault, generated, model

GROUPS = ("precommit", "index", "query", "quality", "peers-search", "peers-links",
          "peers-vectors", "scaling", "compare")
GroupResult = tuple[list[dict[str, Any]], list[str]]


class Skip(Exception):
    """A group that cannot run here (missing input or peer): recorded, not an error."""


@dataclass
class Plan:
    out: Path
    quick: bool
    repeat: int
    sizes: list[int]
    qa_limit: int
    tldr: int
    xlang: int
    peer_queries: int
    process_queries: int
    install: bool
    query: str = "replica consistency"
    note: str = "Home"
    against: str = "main"
    """The earlier commit the `compare` group runs beside this tree."""


@dataclass
class Suite:
    plan: Plan
    work: Path
    indexes: dict[Path, Path] = field(default_factory=dict)
    index_records: dict[Path, dict[str, Any]] = field(default_factory=dict)
    corpora: Any = None

    # -- shared inputs ---------------------------------------------------------------------
    def main_vault(self) -> Generated:
        return generated(self.plan.out, 60 if self.plan.quick else 10000)

    def built(self, vault: Path) -> Path:
        """One `kbase index` of a vault per run, shared by the query and vector groups."""
        if vault not in self.indexes:
            from bench.queries import build

            self.indexes[vault] = build(vault, self.work / f"index-{len(self.indexes)}",
                                        model())
        return self.indexes[vault]

    def shared_corpora(self) -> Any:
        from bench.workloads import shared_present

        if not shared_present():
            raise Skip("../shared/corpora is absent: real corpora and qa sets not measured")
        if model() is None:
            raise Skip("../shared/models/minilm-static-256 is absent")
        if self.corpora is None:
            from bench.corpora import Corpora

            (self.work / "corpora").mkdir(parents=True, exist_ok=True)
            self.corpora = Corpora(self.work / "corpora")
        return self.corpora

    def index_record(self, vault: Path) -> tuple[dict[str, Any], str]:
        if vault not in self.index_records:
            from bench.indexing import build_record

            self.index_records[vault] = dict(zip(("rec", "cmd"),
                                                 build_record(vault, model()), strict=True))
        got = self.index_records[vault]
        return got["rec"], got["cmd"]

    # -- groups ----------------------------------------------------------------------------
    def precommit(self) -> GroupResult:
        from bench import precommit

        return precommit.measure(self.main_vault().path, self.plan.repeat)

    def index(self) -> GroupResult:
        from bench.indexing import figures

        gen = self.main_vault()
        rec, cmd = self.index_record(gen.path)
        return figures(rec, f"generated {gen.notes} notes", cmd), [
            "the tldr-pages build is in the quality group (built once, used by quality "
            "and peers)"]

    def query(self) -> GroupResult:
        from bench import queries

        gen = self.main_vault()
        figs, notes = queries.measure(gen.path, self.built(gen.path), self.plan.repeat,
                                      model(), self.plan.query, self.plan.note)
        if self.plan.quick:
            notes.append("MCP round trips: not measured in a --quick run")
        else:
            more, extra = queries.mcp(max(self.plan.repeat * 6, 10), gen.path,
                                      self.built(gen.path))
            figs += more
            notes += extra
        return figs, notes

    def quality(self) -> GroupResult:
        from bench import quality

        corpora = self.shared_corpora()
        figs, builds, notes = quality.measure(corpora, limit=self.plan.qa_limit,
                                              tldr=self.plan.tldr, xlang=self.plan.xlang)
        for b in builds:
            b["kind"] = "build"
        return figs + builds, notes

    def peers_search(self) -> GroupResult:
        from bench import peers_install, peers_search

        corpora = self.shared_corpora()
        rg, n1 = peers_install.ripgrep(install=self.plan.install)
        bm, n2 = peers_install.python_module("rank_bm25", install=self.plan.install)
        tv, n3 = peers_install.python_module("tantivy", install=self.plan.install)
        figs, notes = peers_search.measure(
            corpora, limit=self.plan.peer_queries, tldr=self.plan.peer_queries if
            self.plan.tldr else 0, rg=rg, have_bm25=bm, have_tantivy=tv,
            process_queries=self.plan.process_queries)
        return figs, [n for n in (n1, n2, n3) if n] + notes

    def peers_links(self) -> GroupResult:
        from bench import peers_install, peers_links

        bin_dir, note = peers_install.npm_tools(self.plan.out / "npm",
                                                install=self.plan.install)
        if bin_dir is None:
            raise Skip(note or "npm link checkers not available")
        small = generated(self.plan.out, 60 if self.plan.quick else 1000)
        vaults: list[tuple[str, Path, int | None, bool]] = [
            (f"generated {small.notes} notes", small.path, small.broken_links, True)]
        notes = []
        for name in WIKILINKED:
            folder = corpus_vault(name)
            if folder is None:
                notes.append(f"{name}: ../shared corpus absent, skipped")
            elif not self.plan.quick:
                vaults.append((name, folder, None, False))
        versions = peers_install.npm_versions(self.plan.out / "npm")
        notes.append("npm versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
        return peers_links.measure(bin_dir, vaults), notes

    def peers_vectors(self) -> GroupResult:
        from bench import peers_vectors

        mdl = model()
        if mdl is None:
            raise Skip("no embedding model (../shared/models/minilm-static-256): no vectors")
        gen = self.main_vault()
        from kbase_ci.vault.notefiles import Vault

        titles = sorted(Path(n.path).stem for n in Vault(gen.path).notes)
        n = 20 if self.plan.quick else 500
        step = max(1, len(titles) // n)
        return peers_vectors.measure(self.built(gen.path), mdl, titles[::step][:n],
                                     f"generated {gen.notes} notes"), []

    def scaling(self) -> GroupResult:
        from bench.indexing import check_all_cold, figures

        figs: list[dict[str, Any]] = []
        for size in self.plan.sizes:
            gen = generated(self.plan.out, size)
            w = f"{size} notes"
            fig = check_all_cold(gen.path)
            fig["workload"], fig["notes"] = w, size
            figs.append(fig)
            rec, cmd = self.index_record(gen.path)
            for f in figures(rec, w, cmd):
                f["notes"] = size
                figs.append(f)
        return figs, []

    def compare(self) -> GroupResult:
        from bench import compare
        from bench.workloads import corpus_vault

        if self.plan.quick:
            raise Skip("compare: not in a --quick run (two trees, two index builds)")
        if corpus_vault(COMPARE_VAULT) is None:
            raise Skip(f"../shared/corpora/{COMPARE_VAULT} is absent: nothing compared")
        return compare.measure(self.plan.against, COMPARE_VAULT, self.plan.repeat,
                               report=lambda line: print(f"[bench] compare: {line}",
                                                         file=sys.stderr, flush=True))


COMPARE_VAULT = "dnd-5e-srd"
"""The `compare` group's vault: real, 1k notes, 5.5 MB (a cold check takes seconds)."""


def _run_group(suite: Suite, name: str) -> dict[str, Any]:
    fn: Callable[[], GroupResult] = getattr(suite, name.replace("-", "_"))
    print(f"[bench] {name} ...", file=sys.stderr, flush=True)
    try:
        wall, cpu, (figs, notes) = clock(fn)
    except Skip as exc:
        return {"status": "skipped", "notes": [str(exc)], "figures": []}
    except (Exception, SystemExit) as exc:  # one broken group must not lose the run
        tb = traceback.format_exc(limit=4)
        print(f"[bench] {name} failed: {exc}\n{tb}", file=sys.stderr, flush=True)
        return {"status": "error", "notes": [f"{type(exc).__name__}: {exc}"[:500]],
                "figures": []}
    print(f"[bench] {name}: {len(figs)} figures in {wall:.0f} s", file=sys.stderr, flush=True)
    return {"status": "ok", "notes": notes, "figures": figs, "seconds": round(wall, 1),
            "cpu_seconds": round(cpu, 1)}


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument("--quick", action="store_true",
                    help="tiny vaults, 1 repetition, no installs (the smoke test)")
    ap.add_argument("--only", default="", help="GROUP[,GROUP]: " + ", ".join(GROUPS))
    ap.add_argument("--repeat", type=int, default=None, help="runs per timing (default 5)")
    ap.add_argument("--doc", type=Path, default=None,
                    help="Markdown report (default docs/benchmarks.md; OUT/ with --quick)")
    ap.add_argument("--sizes", default=None, help="scaling vault sizes (1000,10000,50000)")
    ap.add_argument("--tldr", type=int, default=None, help="tldr hard-subset queries (200)")
    ap.add_argument("--xlang", type=int, default=None, help="cross-language queries (200)")
    ap.add_argument("--qa-limit", type=int, default=None,
                    help="queries per vault qa set (0 = all, the default)")
    ap.add_argument("--peer-queries", type=int, default=None,
                    help="queries per set for the search peers (200)")
    ap.add_argument("--no-install", action="store_true", help="do not install missing peers")
    ap.add_argument("--against", default="main",
                    help="the earlier commit the compare group runs beside this tree")
    ap.add_argument("--update", action="store_true",
                    help="keep the other groups of an existing OUT/results.json and replace "
                         "only the groups run now (each group records its own command)")
    return ap.parse_args(argv)


def make_plan(args: argparse.Namespace) -> Plan:
    q = args.quick

    def pick(value: Any, full: Any, quick: Any) -> Any:
        return value if value is not None else (quick if q else full)
    sizes = pick(args.sizes, "1000,10000,50000", "30,60")
    return Plan(out=args.out.resolve(), quick=q, repeat=pick(args.repeat, 5, 1),
                sizes=[int(s) for s in str(sizes).split(",") if s],
                qa_limit=pick(args.qa_limit, 0, 5), tldr=pick(args.tldr, 200, 0),
                xlang=pick(args.xlang, 200, 0), peer_queries=pick(args.peer_queries, 200, 5),
                process_queries=0 if q else 10, install=not (q or args.no_install),
                against=args.against)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    plan = make_plan(args)
    only = [g.strip() for g in args.only.split(",") if g.strip()] or list(GROUPS)
    unknown = [g for g in only if g not in GROUPS]
    if unknown:
        print(f"unknown group {', '.join(unknown)}; choose from {', '.join(GROUPS)}",
              file=sys.stderr)
        return 2
    shown = ["python", "-m", "bench", *(sys.argv[1:] if argv is None else argv)]
    plan.out.mkdir(parents=True, exist_ok=True)
    work = plan.out / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    t0 = time.perf_counter()
    results: dict[str, Any] = {"command": shlex.join(shown), "machine": machine_info(),
                               "plan": {k: (str(v) if isinstance(v, Path) else v)
                                        for k, v in asdict(plan).items()},
                               "groups": {}}
    out_json = plan.out / "results.json"
    previous: dict[str, Any] | None = None
    if args.update and out_json.is_file():
        previous = json.loads(out_json.read_text(encoding="utf-8"))
    suite = Suite(plan, work)
    try:
        for name in GROUPS:
            if name in only:
                results["groups"][name] = _run_group(suite, name)
                results["groups"][name]["run"] = results["command"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["machine"]["load_end"] = load()
    results["duration_s"] = round(time.perf_counter() - t0, 1)
    if previous is not None:
        # The earlier run stays the main record; this run's groups replace its own and
        # the page lists both command lines.
        for g in previous["groups"].values():
            g.setdefault("run", previous["command"])
        merged = {**previous["groups"], **results["groups"]}
        # An earlier update whose groups were all measured again no longer describes
        # any number on the page.
        redone = set(results["groups"])
        updates = [*(u for u in previous.get("updates", []) if not set(u["groups"]) <= redone),
                   {"command": results["command"], "groups": list(results["groups"]),
                    "date": results["machine"]["date"],
                    "load": [results["machine"]["load_start"], results["machine"]["load_end"]],
                    "duration_s": results["duration_s"]}]
        results = {**previous, "groups": {g: merged[g] for g in GROUPS if g in merged},
                   "updates": updates}
    out_json.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n",
                        encoding="utf-8")
    from bench.report import render

    doc = args.doc or (plan.out / "benchmarks.md" if plan.quick
                       else ROOT / "docs" / "benchmarks.md")
    render(results, doc.resolve(), doc.resolve().parent / "img")
    print(f"results: {out_json}\nreport: {doc}", flush=True)
    return 0
