"""How often `kbase index` tells a person at a terminal that it is still moving:
`python -m bench.index_progress [VAULT] [--model PATH] [--cold]`.

The real command runs in a pseudo-terminal (so it draws its progress bar as it does for
a person), its screen output is read as it arrives, and every change of what the bar
says (stage and `done/total`) is timestamped. Reported: the longest time the screen went
without a change, from the start of the process to its exit, and where that was. Off a
terminal the same build prints one line per stage; those lines are printed too.

Default vault: a git repository of ../shared/corpora/tldr-pages (38k pages), built
from scratch into a temp folder (`--out`), with ../shared/models/minilm-static-256.
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

from bench.freshclone import KBASE, ROOT
from bench.workloads import CORPORA, GIT, MODEL

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_STATE = re.compile(r"([a-z][a-z ]*?)\s+\S*\s*(\d+)/(\d+)")


def _repo(name: str, work: Path) -> Path:
    repo = work / name
    shutil.copytree(CORPORA / name / "vault", repo)
    (repo / ".gitignore").write_text(".kbase/\n", encoding="utf-8")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "corpus"]):
        subprocess.run([*GIT, *args], cwd=repo, check=True)
    return repo


def run_on_terminal(argv: list[str], cwd: Path, env: dict[str, str],
                    seen: Callable[[float, bytes], None], timeout: float = 900) -> int:
    """Run `argv` on a pseudo-terminal (stdin, stdout and stderr), telling `seen` each
    piece of output with the seconds since the start; the exit code."""
    master, slave = pty.openpty()
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=slave, stdout=slave,
                            stderr=slave, close_fds=True)
    os.close(slave)
    while time.perf_counter() - start < timeout:
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            seen(time.perf_counter() - start, data)
        elif proc.poll() is not None:
            break
    code = proc.wait(timeout=60)
    os.close(master)
    return code


def on_terminal(repo: Path, args: list[str]) -> tuple[list[tuple[float, str]], float, int]:
    """(time, state) of every change the progress bar showed, the run's seconds, its exit
    code. The state is the last `stage done/total` drawn."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    changes: list[tuple[float, str]] = []
    buf = [""]

    def seen(t: float, data: bytes) -> None:
        text = _ANSI.sub("", data.decode("utf-8", "replace")).replace("\r", "\n")
        buf[0] = (buf[0] + text)[-4000:]
        found = _STATE.findall(buf[0])
        if found:
            stage, done, total = found[-1]
            state = f"{stage.strip()} {done}/{total}"
            if not changes or changes[-1][1] != state:
                changes.append((t, state))

    start = time.perf_counter()
    code = run_on_terminal([*KBASE, "index", *args], repo, env, seen)
    return changes, time.perf_counter() - start, code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault", nargs="?", default="tldr-pages",
                        help="a folder of ../shared/corpora (default: tldr-pages)")
    parser.add_argument("--model", type=Path, default=MODEL)
    parser.add_argument("--cold", action="store_true", help="--no-cache: parse every note")
    opts = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kbase-progress-") as tmp:
        work = Path(tmp)
        repo = _repo(opts.vault, work)
        args = ["--model", str(opts.model), "--out", str(work / "index")]
        if opts.cold:
            args.append("--no-cache")
        print(f"load at start: {os.getloadavg()[0]:.2f}")
        changes, seconds, code = on_terminal(repo, args)
        marks = [0.0, *(t for t, _ in changes), seconds]
        gaps = [(b - a, i) for i, (a, b) in enumerate(pairwise(marks))]
        worst, at = max(gaps)
        where = ("before the first update" if at == 0 else
                 f"after `{changes[at - 1][1]}`" if at <= len(changes) else "")
        print(f"terminal: exit {code}, {seconds:.1f} s, {len(changes)} progress changes, "
              f"longest without one: {worst:.2f} s ({where})")
        print("longest gaps:")
        for gap, i in sorted(gaps, reverse=True)[:8]:
            after = changes[i - 1][1] if 0 < i <= len(changes) else "(start)"
            print(f"  {gap:5.2f} s after `{after}` (at {marks[i]:.2f} s)")
        shutil.rmtree(work / "index", ignore_errors=True)
        off = subprocess.run([*KBASE, "index", *args], cwd=repo, text=True,
                             capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        print(f"off a terminal (exit {off.returncode}):")
        sys.stdout.write("".join(f"  {ln}\n" for ln in off.stderr.splitlines()))
        print(f"load at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
