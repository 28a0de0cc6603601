"""What a query costs in a fresh clone against `python -c "import numpy"`:

    python -m bench.query_startup [--vaults A,B] [--runs 9] [--tree DIR] [--no-bytecode]
                                  [--reuse]

Per shared vault: a scratch git copy, `kbase index --model ../shared/models/
minilm-static-256`, `kbase publish`, then a `git clone` that has the index only on
`origin/kbase-index` (as an agent finds it) and one query that materialises it (not
timed). Then, `--runs` times each, in turn: a hybrid search, a BM25 search and
`backlinks` of the vault's most-linked note, each paired with `python -c "import numpy"`
run just before it (A B A B ...), whole-process CPU (`os.wait4`: user + system, git's
children included). Prints per vault and command the median CPU, the median and range of
the pair ratios, and the load average before and after; asserts nothing. `--tree DIR`
runs another checkout's kbase (`PYTHONPATH=DIR`, e.g. one of e1fd72d); modules are
compiled to bytecode first unless `--no-bytecode` (then `PYTHONDONTWRITEBYTECODE=1` and
no `.pyc`: every run compiles kbase's modules, as an editable install whose environment
forbids bytecode does).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from bench.figure import process_cpu
from bench.machine import load
from bench.workloads import CORPORA, GIT, MODEL, ROOT, compile_tree, git_copy, spread

VAULTS = ("dnd-5e-srd", "vaultofknowledge", "dendron-site", "data-engineering-wiki",
          "obsidian-tasks-docs", "tldr-pages")
QUERY = {"dnd-5e-srd": "dragon breath weapon",
         "vaultofknowledge": "how do I set up a chroot on Void Linux",
         "dendron-site": "create a hook that runs my own script",
         "data-engineering-wiki": "slowly changing dimension in a data warehouse",
         "obsidian-tasks-docs": "how do I filter tasks by due date",
         "tldr-pages": "extract a tar archive"}


def _most_linked(index: Path) -> str:
    """The note with the most backlinks, read through the index's own reader (checked,
    never unpickled)."""
    from kbase_ci.index.reader import open_index

    reader = open_index(index)
    ptr = reader.ints("backlinks.npy")
    counts = [ptr[i + 1] - ptr[i] for i in range(len(ptr) - 1)]
    return reader.core().paths[counts.index(max(counts))]


def _setup(vault: str, work: Path, env: dict[str, str], reuse: bool) -> tuple[Path, str]:
    if reuse and (work / "clone" / ".git").is_dir():
        return work / "clone", _most_linked(work / "origin" / ".kbase")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    repo = git_copy(CORPORA / vault / "vault", work / "origin")
    kbase = [sys.executable, "-m", "kbase_ci"]
    for args in (["index", "--model", str(MODEL)], ["publish"]):
        subprocess.run([*kbase, *args], cwd=repo, env=env, check=True, capture_output=True)
    subprocess.run([*GIT, "clone", "-q", "--no-single-branch", str(repo), str(work / "clone")],
                   check=True, capture_output=True)
    subprocess.run([*kbase, "search", "--mode", "bm25", QUERY[vault]], cwd=work / "clone",
                   env=env, check=False, capture_output=True)
    return work / "clone", _most_linked(repo / ".kbase")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vaults", default=",".join(VAULTS))
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--tree", type=Path, default=ROOT)
    ap.add_argument("--no-bytecode", action="store_true")
    ap.add_argument("--work", type=Path, default=Path("/tmp/kbase-bench/query-startup"))
    ap.add_argument("--reuse", action="store_true",
                    help="keep a vault's clone and index from an earlier run of this bench")
    args = ap.parse_args(argv)
    if not MODEL.is_dir():
        print(f"{MODEL}: not here (../shared is needed)")
        return 0
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(args.tree.resolve()), KBASE_MODEL_PATH=str(MODEL.parent))
    if args.no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        for cache in args.tree.resolve().glob("kbase_ci/**/__pycache__"):
            shutil.rmtree(cache)
    else:
        compile_tree(args.tree.resolve())
    numpy = [sys.executable, "-c", "import numpy"]
    for vault in filter(None, args.vaults.split(",")):
        if not (CORPORA / vault / "vault").is_dir():
            print(f"{vault}: not here")
            continue
        clone, hub = _setup(vault, args.work / vault, env, args.reuse)
        kbase = [sys.executable, "-m", "kbase_ci"]
        commands = {"hybrid search": [*kbase, "search", QUERY[vault]],
                    "BM25 search": [*kbase, "search", "--mode", "bm25", QUERY[vault]],
                    "backlinks": [*kbase, "backlinks", hub]}
        before = load()
        got: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, cmd in commands.items():
                b = process_cpu(numpy, clone, env)
                got[name].append((process_cpu(cmd, clone, env), b))
        after = load()
        print(f"{vault} (load {before} -> {after}, {args.runs} pairs, "
              f"{'no bytecode' if args.no_bytecode else 'bytecode'}, tree {args.tree}):")
        for name, pairs in got.items():
            print(f"  {name}: {statistics.median(a for a, _ in pairs):.3f} s CPU, import numpy "
                  f"{statistics.median(b for _, b in pairs):.3f} s; ratio median "
                  f"{spread([a / b for a, b in pairs])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
