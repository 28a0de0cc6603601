"""This tree against an earlier commit, side by side in one run, so a regression shows as a
ratio: `python -m bench.compare [--against REF] [--vault NAME] [--runs N] [--only W,...]`.

REF (default `main`) is checked out into a temporary git worktree (`workloads.Worktree`)
and run with PYTHONPATH pointing at it, in this venv. Each side gets its own git copy of
the vault (a ../shared corpus, default dnd-5e-srd) and its own index built by its own code,
so neither reads the other's parse cache or index. Every workload then runs A B A B ...
(this tree, REF), whole-process CPU (user + system of the process and its children), and
the ratio is taken pair by pair: the machine's drift hits both sides alike.

Workloads (`--only`): `hook` (`check --staged` of a new edit of one note, committed
after: the warm hook), `rename-cold` and `rename-warm` (`check --staged` of a staged
rename of the most linked note, without and with the parse cache), `rename-fresh` (the
same without the parse cache but with the side's index published on its `kbase-index`
branch, as a fresh clone has it: issue 32's first commit in a fresh clone), `cold-check` (`check
--all` without a parse cache), `parse` (the parser alone over every note:
bench/parse_digest.py), `search` (`--mode bm25`), `backlinks` (of the most linked note).
`--vault hub` generates issue 40's shape (bench/hubvault.py: 6,000 notes, one linked from
2,200, frontmatter on most), which no shared vault has.
`python -m bench --only compare --against REF` runs it as a group of the suite.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.machine import load
from bench.parse_compare import digest_run
from bench.workloads import GIT, ROOT, Worktree, compile_tree, corpus_vault, git_copy, model

WORKLOADS = ("search", "backlinks", "parse", "hook", "rename-warm", "rename-cold",
             "rename-fresh", "cold-check")
"""In the order they run: the queries first, while the index matches the work tree (the
hook's edits are committed, and would make every later query read them afresh)."""
_WIKI = re.compile(r"\[\[([^\]|#\n]+)")


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Side:
    """One tree's copy of the vault, with the commands run on it."""

    def __init__(self, label: str, tree: Path, vault: Path, work: Path) -> None:
        self.label = label
        self.tree = tree
        self.repo = work / label / "vault"
        self.env = {**os.environ, "PYTHONPATH": str(tree), "KBASE_OFFLINE": "1"}
        shutil.rmtree(self.repo.parent, ignore_errors=True)
        git_copy(vault, self.repo, gitignore=True)
        self.edits = 0
        self.published = ""
        """The commit `kbase publish` made of this side's index; its branch is put back
        only for `rename-fresh` (other workloads run without an index branch)."""

    def git(self, *args: str) -> None:
        subprocess.run([*GIT, *args], cwd=self.repo, check=True, capture_output=True)

    def kbase(self, *args: str) -> float:
        """CPU seconds of one `kbase` process of this side's tree."""
        c0 = _cpu()
        proc = subprocess.run([sys.executable, "-m", "kbase_ci", *args], cwd=self.repo,
                              env=self.env, capture_output=True, text=True, check=False)
        spent = _cpu() - c0
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"{self.label}: kbase {' '.join(args)} exited "
                               f"{proc.returncode}: {proc.stderr[-800:]}")
        return spent

    def drop_cache(self) -> None:
        shutil.rmtree(self.repo / ".git" / "kbase", ignore_errors=True)


def most_linked(vault: Path) -> tuple[str, str]:
    """(note path, its name) of the note most wikilinks name: what a rename breaks most."""
    names = Counter(m.group(1).strip().lower().removesuffix(".md")
                    for p in sorted(vault.rglob("*.md"))
                    for m in _WIKI.finditer(p.read_text(encoding="utf-8", errors="replace")))
    notes = {p.stem.lower(): p.relative_to(vault).as_posix() for p in sorted(vault.rglob("*.md"))}
    for name, _n in names.most_common():
        key = name.rsplit("/", 1)[-1]
        if key in notes:
            return notes[key], Path(notes[key]).stem
    first = min(notes.values())
    return first, Path(first).stem


def workload(name: str, note: str, title: str) -> Callable[[Side], float]:
    """One run of workload `name` on a side: its CPU seconds."""
    def hook(s: Side) -> float:
        s.edits += 1
        with (s.repo / note).open("a", encoding="utf-8") as fh:
            fh.write(f"\nEdit {s.edits} of the benchmark.\n")
        s.git("add", note)
        spent = s.kbase("check", "--staged")
        s.git("commit", "-qm", f"edit {s.edits}", "--no-verify")
        return spent

    def rename(cold: bool, branch: bool = False) -> Callable[[Side], float]:
        def run(s: Side) -> float:
            if cold:
                s.drop_cache()
            if branch:
                s.git("update-ref", "refs/heads/kbase-index", s.published)
            s.git("mv", note, str(Path(note).with_name("Renamed by the benchmark.md")))
            try:
                return s.kbase("check", "--staged")
            finally:
                s.git("reset", "-q", "--hard")
                if branch:
                    s.git("update-ref", "-d", "refs/heads/kbase-index")
        return run

    def cold_check(s: Side) -> float:
        s.drop_cache()
        return s.kbase("check", "--all")

    def parse(s: Side) -> float:
        got: float = digest_run(s.tree, [s.repo])["cpu"]
        return got

    runs: dict[str, Callable[[Side], float]] = {
        "hook": hook, "rename-cold": rename(True), "rename-warm": rename(False),
        "rename-fresh": rename(True, branch=True),
        "cold-check": cold_check, "parse": parse,
        "search": lambda s: s.kbase("search", title, "--mode", "bm25"),
        "backlinks": lambda s: s.kbase("backlinks", title),
    }
    return runs[name]


def measure(against: str, vault_name: str, runs: int, only: tuple[str, ...] = WORKLOADS,
            report: Callable[[str], None] = print) -> tuple[list[dict[str, Any]], list[str]]:
    """Figures (CPU medians of both sides and the median ratio per workload) and notes."""
    work = Path(tempfile.mkdtemp(prefix="kbase-compare-"))
    if vault_name == "hub":  # issue 40's shape, generated (bench/hubvault.py)
        from bench.hubvault import write_hub_vault

        vault = work / "hub-source"
        write_hub_vault(vault)
    else:
        found = corpus_vault(vault_name)
        if found is None:
            shutil.rmtree(work, ignore_errors=True)
            raise FileNotFoundError(f"../shared/corpora/{vault_name}/vault is absent")
        vault = found
    note, title = most_linked(vault)
    mb = sum(p.stat().st_size for p in vault.rglob("*.md")) / 1e6
    notes = [f"vault {vault_name} ({mb:.2f} MB of Markdown); hook edits and renames "
             f"`{note}`, search and backlinks ask for `{title}`",
             f"load average at start {load()}"]
    report(notes[0])
    figs: list[dict[str, Any]] = []
    try:
        with Worktree(against) as old_tree:
            sides = [Side("this", ROOT, vault, work), Side("against", old_tree, vault, work)]
            index = ["index", *(("--model", str(m)) if (m := model()) else ())]
            for s in sides:  # each side's bytecode and index, by its own code (not timed)
                compile_tree(s.tree)
                s.kbase(*index)
                if "rename-fresh" in only:
                    s.kbase("publish")
                    s.published = subprocess.run(
                        [*GIT, "rev-parse", "refs/heads/kbase-index"], cwd=s.repo, check=True,
                        capture_output=True, text=True).stdout.strip()
                    s.git("update-ref", "-d", "refs/heads/kbase-index")
            for name in (w for w in WORKLOADS if w in only):
                fn = workload(name, note, title)
                try:
                    for s in sides:  # a warm-up each: caches, the OS's file cache
                        fn(s)
                    pairs = [(fn(sides[0]), fn(sides[1])) for _ in range(max(1, runs))]
                except (RuntimeError, subprocess.CalledProcessError) as exc:
                    # One side cannot run it (an older tree without the command): the
                    # other workloads still compare.
                    notes.append(f"{name}: not compared ({str(exc).splitlines()[0][:200]})")
                    report(notes[-1])
                    continue
                ratios = [a / b for a, b in pairs if b > 0]
                fig: dict[str, Any] = {"name": name, "workload": vault_name, "unit": "s",
                       "median": round(statistics.median(a for a, _ in pairs), 3),
                       "against": round(statistics.median(b for _, b in pairs), 3),
                       "ratio": round(statistics.median(ratios), 3) if ratios else None,
                       "min": round(min(a for a, _ in pairs), 3),
                       "max": round(max(a for a, _ in pairs), 3), "n": len(pairs),
                       "ref": against, "command": f"python -m bench.compare --against "
                       f"{against} --vault {vault_name} --runs {runs} --only {name}"}
                if name in ("parse", "cold-check"):
                    fig["mb_per_s"] = round(mb / fig["median"], 2) if fig["median"] else None
                figs.append(fig)
                report(f"{name}: this tree {fig['median']:.3f} s CPU, {against} "
                       f"{fig['against']:.3f} s, ratio {fig['ratio']} (median of {len(pairs)} "
                       f"pairs; load {load()})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    notes.append(f"load average at end {load()}")
    return figs, notes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", default="main", help="the earlier commit (default main)")
    parser.add_argument("--vault", default="dnd-5e-srd", help="a corpus of ../shared, or "
                        "`hub`: a generated 6,000-note vault whose hub note 2,200 link to")
    parser.add_argument("--runs", type=int, default=3, help="pairs per workload (default 3)")
    parser.add_argument("--only", default=",".join(WORKLOADS),
                        help="workloads: " + ", ".join(WORKLOADS))
    args = parser.parse_args(argv)
    only = tuple(w.strip() for w in args.only.split(",") if w.strip())
    unknown = [w for w in only if w not in WORKLOADS]
    if unknown:
        print(f"unknown workload {', '.join(unknown)}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    try:
        _figs, notes = measure(args.against, args.vault, args.runs, only)
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"{notes[-1]}; {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
