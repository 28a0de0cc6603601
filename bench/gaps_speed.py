"""`kbase gaps` latency: `python -m bench.gaps_speed [--vault DIR] [--runs N] [--index DIR]`.

Clones the generated 10k-note vault into a scratch folder, builds its index (without a
model: gaps needs no vectors) unless `--index` names a built one, and times the whole
`kbase gaps` process (median of N runs, wall and CPU of the child):
- clean: the work tree matches the index;
- overlaid: 5 notes edited (one gains a concept mention) and 1 added, not rebuilt.
It also prints the concept stage of the build (a full build, then an incremental
one after the edit is committed) and the size of concepts.json.
Target (issue 6): `gaps` under 1 s on the 10k vault.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEN10K = Path("/tmp/kbase-bench/gen10k")
_GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@kbase.invalid",
        "-c", "commit.gpgsign=false", "-c", "gc.auto=0"]
KBASE = [sys.executable, "-m", "kbase_ci"]


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _run(cmd: list[str], cwd: Path) -> tuple[float, float]:
    c0, t0 = _cpu(), time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.decode()[-500:]}")
    return wall, cpu


def _median(cmd: list[str], cwd: Path, runs: int) -> str:
    times = [_run(cmd, cwd) for _ in range(runs)]
    wall = statistics.median(t[0] for t in times)
    cpu = statistics.median(t[1] for t in times)
    return f"{wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms cpu"


def _concept_stage(src: Path) -> str:
    """Seconds `write_concepts` takes here, in-process (full, then from the previous)."""
    from kbase_ci.index.conceptsfile import write_concepts
    from kbase_ci.index.previous import PreviousIndex
    from kbase_ci.index.reader import open_index
    from kbase_ci.parsed import ParsedNote
    from kbase_ci.vault.notefiles import Vault

    vault = Vault(src)
    # Paths are all the stage needs (headings cost little); parsing would dwarf it.
    notes = [ParsedNote(nf.path, nf.path) for nf in vault.notes]
    out = Path(tempfile.mkdtemp(prefix="kbase-gconcepts-"))
    try:
        c0, t0 = time.process_time(), time.perf_counter()
        write_concepts(out, vault, notes)
        full = f"full {time.perf_counter() - t0:.2f} s wall {time.process_time() - c0:.2f} s cpu"
        reader = open_index(src / ".kbase")
        c0, t0 = time.process_time(), time.perf_counter()
        write_concepts(out, vault, notes, PreviousIndex(src / ".kbase", reader.manifest))
        inc = (f"reusing the index {time.perf_counter() - t0:.2f} s wall "
               f"{time.process_time() - c0:.2f} s cpu")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return f"{full}; {inc}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, default=GEN10K)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--index", type=Path, default=None,
                    help="a built index of --vault (default: build one)")
    args = ap.parse_args()
    print("command:", " ".join(sys.argv))
    work = Path(tempfile.mkdtemp(prefix="kbase-gspeed-"))
    try:
        src = work / "src"
        subprocess.run([*_GIT, "clone", "-q", str(args.vault), str(src)], check=True)
        (src / ".git" / "info" / "exclude").write_text(".kbase/\n")
        if args.index is not None:
            shutil.copytree(args.index, src / ".kbase")
        else:
            wall, cpu = _run([*KBASE, "index"], src)
            print(f"kbase index (no model): {wall:.1f} s wall, {cpu:.1f} s cpu")
        size = (src / ".kbase" / "concepts.json").stat().st_size
        print(f"concepts.json: {size / 1e6:.2f} MB")
        print("concept stage of the build:", _concept_stage(src))
        print("gaps, clean:", _median([*KBASE, "gaps"], src, args.runs))
        notes = sorted(p for p in subprocess.run(
            ["git", "ls-files", "-z", "*.md"], cwd=src, capture_output=True, text=True,
            check=True).stdout.split("\0") if p)
        for rel in notes[:: max(1, len(notes) // 5)][:5]:
            with (src / rel).open("a", encoding="utf-8") as fh:
                fh.write("\nBench edit: Change Data Capture meets `bench_knob`.\n")
        (src / "Bench Added.md").write_text("# Bench Added\n\nAlso `bench_knob`.\n")
        subprocess.run([*_GIT, "add", "Bench Added.md"], cwd=src, check=True)
        print("gaps, 6 notes overlaid:", _median([*KBASE, "gaps"], src, args.runs))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
