"""How often the pre-commit hook blocks an edit that adds no problem, before and after.

Usage: python -m bench.hook_blocking [--vaults obsidian-tasks-docs,...] [--notes 30]
       [--seed 29] [--base REV] [--work DIR] [--sample random|with-findings]

Each shared vault (../shared/corpora/NAME/vault, attachments as empty files) becomes a
scratch git repository. For N random notes (seeded), one plain line is appended to the
note and staged, and `kbase check --staged NOTE` runs as pre-commit runs it, once with
kbase at REV (default: the merge base with main, exported with `git archive`) and once
with this checkout; then the edit is undone. The edit introduces nothing, so a blocked
commit (exit 1) is a note whose old problems (or warnings) stop new work: issue 29's
"267 of 1,319 notes of an API-docs vault". Printed per vault: notes tried, commits each
version blocked, and the median and max wall time of one hook run (the parse cache is
warm: both versions checked the vault once first), in CPU seconds of the process.
`--sample with-findings` edits only notes that had a finding before (any severity): the
notes whose every edit the old hook blocked.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO.parent / "shared" / "corpora"
VAULTS = ("obsidian-tasks-docs", "data-engineering-wiki", "dnd-5e-srd", "tldr-pages")
GIT_ENV = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
           "GIT_CONFIG_NOSYSTEM": "1", "NO_COLOR": "1"}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True, env={**os.environ, **GIT_ENV}).stdout


def corpus_repo(name: str, dest: Path) -> Path:
    src = CORPORA / name
    shutil.copytree(src / "vault", dest)
    att = src / "attachments.txt"
    if att.is_file():
        for line in att.read_text(encoding="utf-8").splitlines():
            rel = line.strip()
            if rel and not rel.startswith("#"):
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                (dest / rel).touch()
    _git(dest, "init", "-q", "-b", "main")
    # A detached auto-gc would pack objects while the repository is being copied.
    _git(dest, "config", "gc.autoDetach", "false")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "corpus")
    return dest


_SITE = """\
import sys
# This copy of kbase_ci, not the checkout an editable install points at.
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
"""


def export(rev: str | None, dest: Path) -> Path:
    """The kbase_ci package at `rev` (None: this checkout as it is), under `dest`, which
    then goes first on PYTHONPATH. Both versions are imported the same way: through an
    editable install's finder every import costs more, which would be measured too."""
    dest.mkdir(parents=True)
    if rev is None:
        shutil.copytree(REPO / "kbase_ci", dest / "kbase_ci",
                        ignore=shutil.ignore_patterns("__pycache__"))
    else:
        archive = subprocess.run(["git", "archive", rev, "kbase_ci"], cwd=REPO, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    (dest / "sitecustomize.py").write_text(_SITE, encoding="utf-8")
    return dest


def run(version: Path, repo: Path, *args: str) -> tuple[int, float]:
    rc, cpu, _out = run_out(version, repo, *args)
    return rc, cpu


def run_out(version: Path, repo: Path, *args: str) -> tuple[int, float, str]:
    """(exit code, CPU seconds of the run): CPU, not wall, because the machine is shared
    and wall time also measures the neighbours."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # Bytecode under the work folder: without it every run recompiles (~0.1 s).
    env.update(GIT_ENV, PYTHONPATH=str(version),
               PYTHONPYCACHEPREFIX=str(repo.parent / "pycache"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "kbase_ci", *args], cwd=repo, env=env,
                          capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.returncode, cpu, proc.stdout


def bench_vault(name: str, versions: dict[str, Path], work: Path, n: int, seed: int,
                sample: str = "random") -> dict[str, tuple[int, list[float]]]:
    first = corpus_repo(name, work / name / "repo")
    # A repository per version: the parse cache is stamped with the parser version, and
    # two versions sharing one would each find the other's cache stale on every run.
    repos = {label: first if i == 0 else Path(shutil.copytree(first, work / name / f"r{i}",
                                                              symlinks=True))
             for i, label in enumerate(versions)}
    flagged: set[str] = set()
    for label, version in versions.items():  # warm each version's parse cache
        _rc, _cpu, out = run_out(version, repos[label], "check", "--all", "--format", "json")
        if not flagged:  # the first version's findings: the notes an edit was blocked in
            flagged = {f["path"] for f in json.loads(out)["findings"]}
    notes = sorted(p for p in _git(first, "ls-files", "-z", "*.md").split("\0") if p)
    if sample == "with-findings":
        notes = [p for p in notes if p in flagged]
    picked = random.Random(seed).sample(notes, min(n, len(notes)))
    got: dict[str, tuple[int, list[float]]] = {k: (0, []) for k in versions}
    for note in picked:
        for label, version in versions.items():
            repo = repos[label]
            path = repo / note
            before = path.read_bytes()
            path.write_bytes(before + (b"" if before.endswith(b"\n") or not before else b"\n")
                             + b"\nEdited for the hook benchmark.\n")
            _git(repo, "add", "--", note)
            rc, cpu = run(version, repo, "check", "--staged", note)
            blocked, times = got[label]
            got[label] = (blocked + (rc == 1), [*times, cpu])
            path.write_bytes(before)
            _git(repo, "add", "--", note)
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vaults", default=",".join(VAULTS))
    ap.add_argument("--notes", type=int, default=30)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--base", default=None, help="kbase revision to compare with "
                    "(default: merge base of HEAD and main)")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--sample", choices=["random", "with-findings"], default="random",
                    help="edit random notes, or only notes with a finding before (the "
                         "ones an edit used to be blocked in)")
    args = ap.parse_args()
    base = args.base or _git(REPO, "merge-base", "HEAD", "main").strip()
    work = args.work or Path(tempfile.mkdtemp(prefix="kbase-hookblock-"))
    try:
        versions = {f"before ({base[:8]})": export(base, work / "base"),
                    "after": export(None, work / "after")}
        print(f"{'vault':24} {'notes':>5}  " + "  ".join(
            f"{label + ' blocked':>24} {'cpu med':>8} {'max':>6}" for label in versions))
        for name in args.vaults.split(","):
            if not (CORPORA / name / "vault").is_dir():
                print(f"{name:24} (not available)")
                continue
            got = bench_vault(name, versions, work, args.notes, args.seed, args.sample)
            tried = len(next(iter(got.values()))[1])
            if not tried:
                print(f"{name:24} {0:>5}  (no note to edit)")
                continue
            cells = [f"{blocked:>24} {statistics.median(t):8.2f} {max(t):6.2f}"
                     for blocked, t in got.values()]
            print(f"{name:24} {tried:>5}  " + "  ".join(cells), flush=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
