"""The parser of this tree against the parser of an earlier commit, side by side in one run:
every note's ParsedNote must be the same, and the CPU ratio is printed pair by pair.

Usage: python -m bench.parse_compare [--against REF] [--runs N] [FOLDER ...]

REF (default `main`) is checked out into a temporary git worktree; each run parses every
note under the folders (default: every vault of ../shared/corpora) in a fresh process with
that tree's `kbase_ci`, then with this tree's, alternating (A B A B ...), so the machine's
drift hits both sides alike. Output: the notes whose ParsedNote differs (exit 1 if any),
then per pair the CPU seconds of both and their ratio, and the median ratio. The digests
come from bench/parse_digest.py (the repr of each ParsedNote, hashed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.machine import load
from bench.workloads import CORPORA, ROOT, Worktree

_WORKER = Path(__file__).resolve().parent / "parse_digest.py"


def default_folders() -> list[Path]:
    """The vault of every shared corpus (none when ../shared is absent)."""
    if not CORPORA.is_dir():
        return []
    return sorted(p / "vault" for p in CORPORA.iterdir() if (p / "vault").is_dir())


def digest_run(tree: Path, folders: list[Path]) -> dict[str, Any]:
    """Parse every note under `folders` with `tree`'s parser in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, str(_WORKER), *map(str, folders)], env=env,
                         capture_output=True, text=True, check=True).stdout
    result: dict[str, Any] = json.loads(out)
    if Path(result["tree"]).resolve() != tree.resolve():
        raise RuntimeError(f"the worker imported {result['tree']}, not {tree}")
    return result


def differences(new: dict[str, str], old: dict[str, str]) -> list[str]:
    """Paths whose digest differs or that only one side parsed."""
    return sorted(p for p in new.keys() | old.keys() if new.get(p) != old.get(p))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--against", default="main", help="the earlier commit (default main)")
    parser.add_argument("--runs", type=int, default=3, help="pairs of runs (default 3)")
    args = parser.parse_args(argv)
    folders = args.folders or default_folders()
    if not folders:
        print("no folders given and ../shared/corpora is absent", file=sys.stderr)
        return 2
    print(f"load average at start: {load()}")
    with Worktree(args.against) as old_tree:
        ratios: list[float] = []
        diff: list[str] = []
        for run in range(max(1, args.runs)):
            new = digest_run(ROOT, folders)
            old = digest_run(old_tree, folders)
            if run == 0:
                diff = differences(new["digests"], old["digests"])
                print(f"{new['notes']} notes, {new['bytes'] / 1e6:.2f} MB; ParsedNote "
                      f"differs from {args.against} for {len(diff)} notes")
                for path in diff[:20]:
                    print(f"  differs: {path}")
            mb = new["bytes"] / 1e6
            ratios.append(new["cpu"] / old["cpu"])
            print(f"pair {run + 1}: this tree {new['cpu']:.2f} s CPU ({mb / new['cpu']:.2f} "
                  f"MB/s), {args.against} {old['cpu']:.2f} s CPU ({mb / old['cpu']:.2f} "
                  f"MB/s): ratio {ratios[-1]:.3f}")
    print(f"median CPU ratio this tree / {args.against}: {statistics.median(ratios):.3f}; "
          f"load average at end: {load()}")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
