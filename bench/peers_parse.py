"""Cold `kbase check --all` against markdown-it-py tokenising the same notes, whole-process
CPU alternated pair by pair (issue 40's target: kbase <= 0.8x on every shared vault).

Usage: python -m bench.peers_parse [VAULT ...] [--runs N] [--jobs N] [--floor]

VAULT is the name of a shared corpus (`dendron-site`: its `vault/`; `tldr-pages`: its
English `pages/`, 7k+ notes, as before) or any folder of Markdown notes; the default is
every shared corpus. Each is copied into a scratch folder once; each pair runs `kbase
check --all --no-cache` there (no git: the folder is walked; `--jobs` passed on when
given) and then a fresh Python process that reads every `.md` under it and tokenises it
with `markdown_it.MarkdownIt().parse` (markdown-it-py must be installed: `pip install
markdown-it-py`). Prints both CPU figures, the MB/s of each and each pair's ratio, then
per vault the median ratio and which vault is worst, with the load average beside them.
`--floor` adds tree-sitter's own cost to each pair, as ratios to markdown-it-py: a process
that reads every note and runs only the block grammar, and one that also parses every
inline node with the inline grammar, as tree-sitter-markdown's own parser does.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench.figure import process_cpu
from bench.machine import load
from bench.workloads import CORPORA, ROOT

_TOKENISE = """
import pathlib, sys
from markdown_it import MarkdownIt
md = MarkdownIt()
for p in sorted(pathlib.Path(sys.argv[1]).rglob("*.md")):
    md.parse(p.read_text(encoding="utf-8", errors="replace"))
"""


_FLOOR = """
import pathlib, sys
import tree_sitter_markdown as tsm
from tree_sitter import Language, Parser, Range
block = Parser(Language(tsm.language()))
inline = Parser(Language(tsm.inline_language()))
every = sys.argv[2] == "inline"
for p in sorted(pathlib.Path(sys.argv[1]).rglob("*.md")):
    src = p.read_bytes()
    tree = block.parse(src)
    stack = [tree.root_node] if every else []
    while stack:
        node = stack.pop()
        if node.type != "inline":
            stack.extend(node.children)
            continue
        ranges, pos, point = [], node.start_byte, node.start_point
        for hole in node.children:  # block markers (`> `) are not inline text
            if hole.type == "block_continuation":
                if hole.start_byte > pos:
                    ranges.append(Range(point, hole.start_point, pos, hole.start_byte))
                pos, point = hole.end_byte, hole.end_point
        if node.end_byte > pos:
            ranges.append(Range(point, node.end_point, pos, node.end_byte))
        if ranges:
            inline.included_ranges = ranges
            inline.parse(src)
"""


_FLOOR_NAMES = {"block": "block grammar", "inline": "block + every inline node"}


def _cpu(cmd: list[str], cwd: Path) -> float:
    return process_cpu(cmd, cwd, {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def vault_folder(name: str) -> Path:
    """A shared corpus's notes by name (tldr-pages: its English `pages/`), else a folder."""
    corpus = CORPORA / name / "vault"
    if name == "tldr-pages":
        corpus = corpus / "pages"
    return corpus if corpus.is_dir() else Path(name)


def default_vaults() -> list[str]:
    if not CORPORA.is_dir():
        return []
    return sorted(p.name for p in CORPORA.iterdir() if (p / "vault").is_dir())


def measure(name: str, folder: Path, runs: int, jobs: int | None, floor: bool) -> float:
    """The median ratio of `runs` pairs on one vault, each pair printed."""
    with tempfile.TemporaryDirectory(prefix="kbase-peers-parse-") as tmp:
        work = Path(tmp) / "vault"
        shutil.copytree(folder, work)
        notes = list(work.rglob("*.md"))
        mb = sum(p.stat().st_size for p in notes) / 1e6
        print(f"{name}: {len(notes)} notes, {mb:.2f} MB; load average {load()}")
        kbase = [sys.executable, "-m", "kbase_ci", "check", "--all", "--no-cache"]
        if jobs is not None:
            kbase += ["--jobs", str(jobs)]
        tokenise = [sys.executable, "-c", _TOKENISE, str(work)]
        floors = {kind: [sys.executable, "-c", _FLOOR, str(work), kind]
                  for kind in ("block", "inline")} if floor else {}
        _cpu(kbase, work)  # warm-up: the OS's file cache, bytecode
        ratios = []
        for run in range(max(1, runs)):
            ours, theirs = _cpu(kbase, work), _cpu(tokenise, work)
            ratios.append(ours / theirs)
            grammar = "".join(f"; {_FLOOR_NAMES[kind]} {_cpu(cmd, work) / theirs:.3f}"
                              for kind, cmd in floors.items())
            print(f"  pair {run + 1}: kbase check --all {ours:.2f} s CPU ({mb / ours:.2f} "
                  f"MB/s), markdown-it-py {theirs:.2f} s ({mb / theirs:.2f} MB/s): ratio "
                  f"{ratios[-1]:.3f}{grammar}")
    median = statistics.median(ratios)
    print(f"  {name}: median ratio kbase / markdown-it-py {median:.3f} (range "
          f"{min(ratios):.3f}-{max(ratios):.3f})")
    return median


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("vaults", nargs="*", help="shared corpus names or folders "
                        "(default: every shared corpus)")
    parser.add_argument("--runs", type=int, default=3, help="pairs per vault (default 3)")
    parser.add_argument("--jobs", type=int, help="kbase's parser processes (default: its own)")
    parser.add_argument("--floor", action="store_true", help="also time tree-sitter alone")
    args = parser.parse_args(argv)
    names = args.vaults or default_vaults()
    missing = [n for n in names if not vault_folder(n).is_dir()]
    if not names or missing:
        print(f"absent: {', '.join(missing) or 'every shared corpus'}", file=sys.stderr)
        return 2
    results = {n: measure(n, vault_folder(n), args.runs, args.jobs, args.floor) for n in names}
    worst = max(results, key=results.__getitem__)
    print(f"worst: {worst}, {results[worst]:.3f}; load average at end {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
