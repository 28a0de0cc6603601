"""Deterministic synthetic Obsidian vault for benchmarks: `python -m bench.generate OUT`.

The same seed and size give byte-identical files and the same commit SHA: values come
only from seeded `random.Random` instances, nothing iterates a set, reads the clock or
depends on the locale, and git runs with a fixed identity, dates and no user config.
Links are valid unless deliberately broken, so a checker should report exactly
`VaultStats.broken_links` problems. Markdown link destinations are relative to the linking
note and only point into its own folder subtree, so Obsidian's path-suffix rule finds
them too.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kbase_ci.cli.main import exit_code_for
from kbase_ci.errors import GitError, KbaseError, UsageError

from .plan import Planner
from .render import Renderer

MIN_NOTES = 30
GIT_DATE = "2024-01-01T00:00:00+00:00"
GIT_USER = ("kbase bench", "bench@kbase.invalid")


@dataclass(frozen=True, slots=True)
class VaultStats:
    notes: int
    bytes: int
    """Total size of the written files (notes and attachments), not counting `.git`."""
    links: int
    """Internal links written: wikilinks and embeds (frontmatter too) and `.md` links."""
    broken_links: int
    """How many of `links` are broken on purpose."""
    attachments: int


def generate_vault(out: Path, notes: int, seed: int = 42, *, git: bool = True) -> VaultStats:
    if notes < MIN_NOTES:
        raise UsageError(f"need at least {MIN_NOTES} notes, got {notes}")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} exists and is not an empty directory")
    plan = Planner(random.Random(seed), notes).plan()
    renderer = Renderer(random.Random(seed + 1), plan)
    files = renderer.render_all()
    total = 0
    for folder in sorted({rel.rpartition("/")[0] for rel, _ in files}):
        (out / folder).mkdir(parents=True, exist_ok=True)
    for rel, data in files:
        (out / rel).write_bytes(data)
        total += len(data)
    if git:
        _commit_all(out, f"Benchmark vault: {notes} notes, seed {seed}")
    return VaultStats(notes=len(plan.notes), bytes=total, links=renderer.links,
                      broken_links=renderer.broken, attachments=len(renderer.lm.images))


def _commit_all(root: Path, message: str) -> None:
    # Inherited GIT_* variables (e.g. GIT_DIR inside a hook) or a user's global config
    # (gpg signing, hooks, autocrlf) would change where we commit or the commit SHA.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_DATE=GIT_DATE, GIT_COMMITTER_DATE=GIT_DATE)
    # gc.auto=0: a detached auto-gc would keep rewriting .git while benchmarks run.
    for args in (["init", "-q", "-b", "main"], ["config", "user.name", GIT_USER[0]],
                 ["config", "user.email", GIT_USER[1]], ["config", "core.autocrlf", "false"],
                 ["config", "gc.auto", "0"], ["add", "-A"],
                 ["commit", "-q", "--no-verify", "--no-gpg-sign", "-m", message]):
        proc = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0:
            raise GitError(f"git {args[0]} failed in {root}: {proc.stderr.strip()}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.generate",
                                     description="Write a synthetic Obsidian vault.")
    parser.add_argument("out", type=Path, help="new or empty directory")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--no-git", dest="git", action="store_false",
                        help="skip git init and the commit")
    parser.add_argument("--hub", action="store_true",
                        help="issue 40's shape instead: one note linked from 2,200 of "
                             "--notes (default then 6,000), frontmatter on most "
                             "(bench/hubvault.py)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.hub:
        from .hubvault import write_hub_vault

        args.out.mkdir(parents=True, exist_ok=True)
        n, size = write_hub_vault(args.out, 6000 if args.notes == 10_000 else args.notes)
        if args.git:
            _commit_all(args.out, f"Hub benchmark vault: {n} notes")
        print(f"notes={n} bytes={size} ({size / 1e6:.1f} MB) hub=Hub Topic.md "
              f"seconds={time.perf_counter() - start:.2f}")
        return 0
    try:
        stats = generate_vault(args.out, args.notes, args.seed, git=args.git)
    except KbaseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exit_code_for(exc)
    elapsed = time.perf_counter() - start
    print(f"notes={stats.notes} bytes={stats.bytes} ({stats.bytes / 1e6:.1f} MB) "
          f"links={stats.links} broken_links={stats.broken_links} "
          f"attachments={stats.attachments} seconds={elapsed:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
