"""CPU of `kbase ci` on a one-note push to the default branch, side by side:

    python -m bench.ci_push VAULT [--model DIR] [--runs 5] [--vs TREE[:cache|:none]]...

Each arm is a kbase-ci tree (this one first, then every `--vs TREE`: a checkout of another
commit, run with `PYTHONPATH=TREE`) and how its push job may start: `cache` (this tree's
default) passes `--index-cache DIR`, the folder the action restores from the default
branch's Actions cache and saves after the run; `none` passes nothing, so the tree does
what its own push job did (from nothing at e1fd72d; seeded from the index branch before
8248b40, the old incremental build).

Set-up per arm, as on GitHub: a bare origin holding the vault, a clone; one push run (not
timed) publishes the index branch and leaves the parse cache (`.git/kbase`, which the
action caches too) and, for `cache`, the cached index. Then each round commits the same
one-line edit of one note in every arm's clone, pushes it, and runs each arm's `kbase ci`
in turn (A B A B ...), timing the whole process tree's CPU (`os.wait4`: user + system, the
build's worker processes included). Prints per arm the median and range of CPU seconds,
the pair ratios against the first arm, and the load average before and after; asserts
nothing. The published index of every arm's last round is compared with a build from
nothing of the same commit (`kbase index` in a fresh clone): "identical" or the files that
differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.figure import process_cpu
from bench.machine import load
from bench.workloads import GIT, ROOT, git_copy, spread


@dataclass
class Arm:
    name: str
    tree: Path
    cache: bool
    work: Path
    clone: Path = Path()
    cpu: list[float] | None = None


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def _env(arm: Arm, sha: str, run: str) -> dict[str, str]:
    tmp = arm.work / run
    tmp.mkdir(parents=True, exist_ok=True)
    event = tmp / "event.json"
    repo = {"full_name": "bench/vault", "default_branch": "main"}
    event.write_text(json.dumps({"repository": repo, "before": "0" * 40, "after": sha}),
                     encoding="utf-8")
    for f in ("summary.md", "output.txt"):
        (tmp / f).write_text("", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    env.update({"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(event),
                "GITHUB_REPOSITORY": "bench/vault", "GITHUB_SHA": sha,
                "GITHUB_REF": "refs/heads/main", "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
                "GITHUB_OUTPUT": str(tmp / "output.txt"), "RUNNER_TEMP": str(tmp),
                "PYTHONPATH": str(arm.tree), "GIT_AUTHOR_NAME": "b",
                "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
                "GIT_COMMITTER_EMAIL": "b@x"})
    return env


def _run(arm: Arm, run: str, model: Path | None) -> tuple[float, float, str]:
    """(CPU seconds of the whole process tree, wall seconds, output) of one push run."""
    sha = _git(arm.clone, "rev-parse", "HEAD")
    args = [sys.executable, "-m", "kbase_ci", "ci", "--mode", "index"]
    if model is not None:
        args += ["--model", str(model)]
    if arm.cache:
        args += ["--index-cache", str(arm.work / "index-cache")]
    log = arm.work / f"{run}.log"
    t0 = time.perf_counter()
    with log.open("wb") as out:
        cpu = process_cpu(args, arm.clone, _env(arm, sha, run), out=out)
    return cpu, time.perf_counter() - t0, log.read_text(encoding="utf-8", errors="replace")


def _setup(arm: Arm, vault: Path) -> None:
    shutil.rmtree(arm.work, ignore_errors=True)
    arm.work.mkdir(parents=True)
    git_copy(vault, arm.work / "seed", message="vault")
    _git(arm.work, "clone", "-q", "--bare", "seed", "origin.git")
    _git(arm.work, "clone", "-q", "origin.git", "clone")
    arm.clone = arm.work / "clone"


def _edit(clone: Path, path: str, round_no: int) -> None:
    with (clone / path).open("a", encoding="utf-8") as fh:
        fh.write(f"\nEdited in push {round_no}.\n")
    _git(clone, "commit", "-qam", f"push {round_no}: edit {path}")
    _git(clone, "push", "-q", "origin", "main")


def _files(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _published(arm: Arm) -> dict[str, str]:
    out = arm.work / "published"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    data = subprocess.run(["git", "archive", "refs/heads/kbase-index"],
                          cwd=arm.work / "origin.git", check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=data, check=True)
    return _files(out)


def _from_nothing(arm: Arm, model: Path | None) -> dict[str, str]:
    fresh = arm.work / "fresh"
    shutil.rmtree(fresh, ignore_errors=True)
    _git(arm.work, "clone", "-q", "origin.git", "fresh")
    args = [sys.executable, "-m", "kbase_ci", "index", "--out", str(arm.work / "full")]
    if model is not None:
        args += ["--model", str(model)]
    env = {**os.environ, "PYTHONPATH": str(arm.tree)}
    subprocess.run(args, cwd=fresh, env=env, check=True, capture_output=True)
    return _files(arm.work / "full")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("vault", type=Path)
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--vs", action="append", default=[], metavar="TREE[:cache|:none]")
    ap.add_argument("--this", default="cache", choices=["cache", "none"],
                    help="how this tree's push job starts (default: from its cache)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/kbase-bench/ci-push"))
    args = ap.parse_args(argv)
    arms = [Arm("this", ROOT, args.this == "cache", args.work / "this")]
    for i, spec in enumerate(args.vs):
        tree, _, how = spec.partition(":")
        arms.append(Arm(f"vs{i + 1}:{Path(tree).name}", Path(tree).resolve(), how == "cache",
                        args.work / f"vs{i + 1}"))
    for arm in arms:
        _setup(arm, args.vault)
        _run(arm, "first", args.model)
        arm.cpu = []
    notes = sorted(p for p in _git(arms[0].clone, "ls-files", "*.md").splitlines())
    print(f"load before: {load()}")
    for r in range(args.runs):
        path = notes[(r + 1) * len(notes) // (args.runs + 2)]
        for arm in arms:
            _edit(arm.clone, path, r)
        for arm in arms:
            cpu, wall, text = _run(arm, f"round{r}", args.model)
            assert arm.cpu is not None
            arm.cpu.append(cpu)
            print(f"round {r} {arm.name}: {cpu:.2f} s CPU, {wall:.1f} s wall | "
                  + " | ".join(ln for ln in text.splitlines()
                               if ln.startswith("kbase ci: index")))
    print(f"load after: {load()}")
    base = arms[0].cpu or []
    for arm in arms:
        cpus = arm.cpu or []
        how = "cache" if arm.cache else "none"
        line = (f"{arm.name} ({how}): median {statistics.median(cpus):.2f} s CPU "
                f"({min(cpus):.2f}-{max(cpus):.2f}, n={len(cpus)})")
        if arm is not arms[0]:
            line += (f"; this/{arm.name} pair ratio median "
                     f"{spread([a / b for a, b in zip(base, cpus, strict=True)])}")
        print(line)
    for arm in arms:
        got, want = _published(arm), _from_nothing(arm, args.model)
        diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        print(f"{arm.name}: published index vs a build from nothing: "
              + ("identical" if not diff else f"differs in {', '.join(diff[:8])}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
