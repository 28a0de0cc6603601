"""Cold `kbase check --all` against markdown-it-py tokenising the same notes, whole-process
CPU alternated pair by pair (issue 32's target: kbase <= 0.25x).

Usage: python -m bench.peers_parse [FOLDER] [--runs N]

FOLDER (default: tldr-pages' English `pages/` of ../shared, 7k+ notes) is copied into a
scratch folder once; each pair runs `kbase check --all --no-cache` there (no git: the
folder is walked) and then a fresh Python process that reads every `.md` under it and
tokenises it with `markdown_it.MarkdownIt().parse` (markdown-it-py must be installed:
`pip install markdown-it-py`). Prints both CPU figures, the MB/s of each, and the median
ratio, with the load average beside them.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.machine import load
from bench.workloads import CORPORA, ROOT

_TOKENISE = """
import pathlib, sys
from markdown_it import MarkdownIt
md = MarkdownIt()
for p in sorted(pathlib.Path(sys.argv[1]).rglob("*.md")):
    md.parse(p.read_text(encoding="utf-8", errors="replace"))
"""


def _cpu(cmd: list[str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-500:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", nargs="?", type=Path,
                        default=CORPORA / "tldr-pages" / "vault" / "pages")
    parser.add_argument("--runs", type=int, default=3, help="pairs (default 3)")
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        print(f"{args.folder} is absent", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kbase-peers-parse-") as tmp:
        work = Path(tmp) / "vault"
        shutil.copytree(args.folder, work)
        notes = list(work.rglob("*.md"))
        mb = sum(p.stat().st_size for p in notes) / 1e6
        print(f"{len(notes)} notes, {mb:.2f} MB; load average at start {load()}")
        kbase = [sys.executable, "-m", "kbase_ci", "check", "--all", "--no-cache"]
        tokenise = [sys.executable, "-c", _TOKENISE, str(work)]
        _cpu(kbase, work)  # warm-up: the OS's file cache, bytecode
        ratios = []
        for run in range(max(1, args.runs)):
            ours, theirs = _cpu(kbase, work), _cpu(tokenise, work)
            ratios.append(ours / theirs)
            print(f"pair {run + 1}: kbase check --all {ours:.2f} s CPU ({mb / ours:.2f} MB/s), "
                  f"markdown-it-py {theirs:.2f} s ({mb / theirs:.2f} MB/s): ratio "
                  f"{ratios[-1]:.3f}")
    print(f"median ratio kbase / markdown-it-py: {statistics.median(ratios):.3f}; load "
          f"average at end {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
