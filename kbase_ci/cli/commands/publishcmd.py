"""`kbase publish`: commit the built index to the index branch; `--push` publishes it."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK, UsageError
from kbase_ci.git.indexbranch import BRANCH
from kbase_ci.git.repo import find_root, toplevel


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "publish", help="commit the built index (.kbase/) to the index branch",
        description="Write the index directory as the tree of one commit on the index branch, "
                    "with git plumbing only: the work tree, the git index and HEAD are not "
                    "touched. Nothing is committed when the index is unchanged. With --push, "
                    "push with a lease on the tip seen; a lost race is settled by stopping "
                    "(the branch holds a newer source's index) or rebuilding and retrying. "
                    "Exit 0 published or up to date, 1 gave up after lost races, 2 refused.")
    p.add_argument("--dir", type=Path, default=None, metavar="DIR",
                   help="index directory (default: ROOT/.kbase, where `kbase index` "
                        "writes)")
    p.add_argument("--branch", default=BRANCH, help="index branch (default: "
                   "%(default)s)")
    p.add_argument("--remote", default="origin", help="remote for --push (default: "
                   "%(default)s)")
    p.add_argument("--push", action="store_true", help="push the branch to the remote")
    p.add_argument("--squash", action="store_true", help="keep a single orphan commit "
                   "instead of one commit per publish")
    p.add_argument("--force", action="store_true", help="replace a branch that holds no "
                   "kbase index, a newer index format, or a newer source's index")
    p.add_argument("--allow-dirty", action="store_true", help="publish an index built from "
                   "a work tree with uncommitted changes")
    p.add_argument("--max-retries", type=int, default=3, metavar="N",
                   help="rebuild-and-retry rounds after lost push races (default: "
                        "%(default)s)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _rebuild(args: argparse.Namespace, out_dir: Path) -> Callable[[], None]:
    """A callback that rebuilds the index from the current source."""
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.cli.common import open_vault
    from kbase_ci.index.indexbuild import build_index

    def rebuild() -> None:
        build_index(open_vault(args), out_dir)

    return rebuild


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds this parser in a core install (no search extra).
    from kbase_ci.index.publish import describe, publish

    root: Path = args.root if args.root is not None else find_root()
    repo = toplevel(root.resolve())
    if repo is None:
        raise UsageError(f"not a git repository: {root}")
    # The same default as `kbase index --out`: .kbase in the vault root.
    if args.dir is None and (root / ".kbase").is_symlink():  # committed: may lead anywhere
        raise UsageError(f"{root / '.kbase'} is a symbolic link; kbase does not publish "
                         "through one (pass the index folder itself)")
    out_dir = (args.dir if args.dir is not None else root / ".kbase").resolve()
    result = publish(repo, out_dir, branch=args.branch, remote=args.remote, push=args.push,
                     squash=args.squash, force=args.force, allow_dirty=args.allow_dirty,
                     max_retries=args.max_retries, rebuild=_rebuild(args, out_dir))
    if args.json:
        json.dump(result.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    line = describe(result)
    print(line, file=sys.stderr if args.json or not result.ok else sys.stdout)
    if result.ignored:
        print(f"kbase publish: note: {len(result.ignored)} file(s) in {out_dir} are not in "
              f"the manifest and were not published (e.g. {result.ignored[0]})",
              file=sys.stderr)
    return EXIT_OK if result.ok else EXIT_FINDINGS
