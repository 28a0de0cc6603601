"""`kbase ci` on a PR touching 5 notes of the generated 10k-note vault.

    python -m bench.ci_speed [--vault /tmp/kbase-bench/gen10k] [--work DIR] [--runs 3]

Set-up, as on GitHub: a bare "origin" holding the vault; a push run (`kbase ci`, push
event) publishes the index branch and leaves the parse cache that actions/cache would
save; then a PR branch edits 5 notes (one new broken link, one fixed, text changes).
Timed: the PR run with the parse cache restored (the normal case: the action restores
the default branch's cache), and once cold (no cache at all), in a fresh clone.
Target: under 10 s on 2 cores for the warm PR run. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_VAULT = Path("/tmp/kbase-bench/gen10k")
CPU_LOG: list[float] = []


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def runner_env(tmp: Path, name: str, payload: dict[str, object], sha: str,
               ref: str) -> dict[str, str]:
    tmp.mkdir(parents=True, exist_ok=True)
    event = tmp / "event.json"
    event.write_text(json.dumps(payload), encoding="utf-8")
    for f in ("summary.md", "output.txt"):
        (tmp / f).write_text("", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update({"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(event),
                "GITHUB_REPOSITORY": "bench/vault", "GITHUB_SHA": sha, "GITHUB_REF": ref,
                "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
                "GITHUB_OUTPUT": str(tmp / "output.txt"), "RUNNER_TEMP": str(tmp),
                "PYTHONPATH": str(REPO), "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
                "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"})
    return env


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def kbase_ci(cwd: Path, env: dict[str, str], *args: str) -> tuple[float, int, str]:
    """Wall seconds, exit code, output; CPU seconds (all processes) go to CPU_LOG."""
    t0, c0 = time.perf_counter(), _children_cpu()
    proc = subprocess.run([sys.executable, "-m", "kbase_ci", "ci", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)
    CPU_LOG.append(_children_cpu() - c0)
    return time.perf_counter() - t0, proc.returncode, proc.stdout + proc.stderr


def edit_five(clone: Path) -> list[str]:
    notes = sorted(p for p in git(clone, "ls-files", "*.md").splitlines()
                   if not p.startswith("Journal/"))[100:600:100]
    for i, rel in enumerate(notes):
        path = clone / rel
        text = path.read_text(encoding="utf-8")
        extra = "\n\nSee [[No Such Note Anywhere]].\n" if i == 0 else \
            f"\n\nEdited in the benchmark PR ({i}).\n"
        path.write_text(text + extra, encoding="utf-8")
    git(clone, "commit", "-qam", "bench PR: edit 5 notes")
    return notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vault", type=Path, default=DEFAULT_VAULT)
    ap.add_argument("--work", type=Path, default=Path("/tmp/kbase-bench/ci-speed"))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    if not (args.vault / ".git").is_dir():
        subprocess.run([sys.executable, "-m", "bench.generate", str(args.vault), "--notes",
                        "10000"], cwd=REPO, check=True)
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    origin = args.work / "origin.git"
    git(args.work, "clone", "-q", "--bare", str(args.vault), str(origin))
    main_branch = git(origin, "symbolic-ref", "--short", "HEAD")
    clone = args.work / "clone"
    git(args.work, "clone", "-q", str(origin), str(clone))
    # No detached `git gc --auto` after the publish: it would compete with the timed runs.
    git(clone, "config", "gc.auto", "0")
    base = git(clone, "rev-parse", "HEAD")
    repo_json = {"full_name": "bench/vault", "default_branch": main_branch}

    env = runner_env(args.work / "push", "push", {"repository": repo_json, "before": "0" * 40},
                     base, f"refs/heads/{main_branch}")
    secs, code, out = kbase_ci(clone, env)
    print(f"push run (check + index build + publish, cold parse cache): {secs:.1f} s "
          f"(exit {code})")
    if code != 0:
        print(out[-2000:])
        return 1
    print("  " + " | ".join(ln for ln in out.splitlines() if ln.startswith("kbase")))

    git(clone, "checkout", "-qb", "pr")
    notes = edit_five(clone)
    head = git(clone, "rev-parse", "HEAD")
    git(clone, "push", "-q", "origin", "pr")
    pr = {"number": 1, "pull_request": {
        "number": 1, "head": {"sha": head, "ref": "pr", "repo": repo_json},
        "base": {"sha": base, "ref": main_branch, "repo": repo_json}}, "repository": repo_json}
    times = []
    for i in range(args.runs):
        env = runner_env(args.work / f"pr{i}", "pull_request", pr, head, "refs/pull/1/merge")
        secs, code, out = kbase_ci(clone, env, "--no-comment")
        times.append(secs)
    cpu = CPU_LOG[-args.runs:]
    print(f"PR run, 5 notes changed, parse cache restored: median {statistics.median(times):.2f}"
          f" s wall of {args.runs} ({', '.join(f'{t:.2f}' for t in times)}), "
          f"{statistics.median(cpu):.2f} s CPU (both processes), exit {code}")
    print("  " + " | ".join(ln for ln in out.splitlines() if ln.startswith("kbase ci:")))
    print(f"  changed: {', '.join(notes)}")

    cold = args.work / "cold"
    git(args.work, "clone", "-q", "--no-single-branch", str(origin), str(cold))
    git(cold, "checkout", "-q", head)
    env = runner_env(args.work / "pr-cold", "pull_request", pr, head, "refs/pull/1/merge")
    secs, code, out = kbase_ci(cold, env, "--no-comment")
    print(f"PR run, no parse cache (fresh clone, cache miss): {secs:.1f} s wall, "
          f"{CPU_LOG[-1]:.1f} s CPU, exit {code}")
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
