"""On a push to the default branch: build the index from the checked-out commit and
publish it to the index branch.

The build starts from nothing (issue 28: CI rebuilds from source). It used to unpack the
branch's tip and reuse every shard whose notes had not changed, checked only against
that branch's own manifest: a forged shard (its hashes recomputed by anyone who can push
to the branch) was then republished under the job's own commit and became the official
index. Now no byte of the old branch is reused; the job reads only its tip's
`manifest.json` (under a size cap, kbase_ci.index.manifest.manifest_at) to know whether
it holds a newer source, and a branch that is not a valid index (links, huge blobs, bad
types) is simply replaced by the next publish. A folder a previous run of the job left
(a self-hosted runner keeps `.git/kbase-ci/`) is removed first for the same reason.
What this costs is measured in docs/action.md. Races with a concurrent run are
`publish`'s job: it leases, and rebuilds from the current commit when it loses, or stops
when the branch already holds a newer source.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from kbase_ci.errors import UsageError
from kbase_ci.git.repo import toplevel
from kbase_ci.index.build import BuildResult, build_index
from kbase_ci.index.publish import PublishResult, publish
from kbase_ci.scope.build import build_declared
from kbase_ci.vault.files import Vault


@dataclass(frozen=True)
class IndexOutcome:
    build: BuildResult
    publish: PublishResult
    scopes: tuple[str, ...] = ()
    """One line per scope declared in `.kbase.yml`: built, up to date, or why not."""


def build_and_publish(root: Path, out_dir: Path, *, branch: str, remote: str = "origin",
                      model: Path | None = None, max_retries: int = 3) -> IndexOutcome:
    repo = toplevel(root)
    if repo is None:
        raise UsageError(f"the index job needs a git repository; {root} is not in one")
    if out_dir.is_dir() and not out_dir.is_symlink():
        # Built from source: nothing a previous run of the job left is reused. (A link
        # there is left for build_index to refuse.)
        shutil.rmtree(out_dir)

    def rebuild() -> None:  # after a lost push race: the index of the current commit
        build_index(Vault(root), out_dir, model=model)
        build_declared(root, out_dir)

    built = build_index(Vault(root), out_dir, model=model)
    scopes = build_declared(root, out_dir)
    result = publish(repo, out_dir, branch=branch, remote=remote, push=True,
                     max_retries=max_retries, rebuild=rebuild)
    return IndexOutcome(built, result, scopes)


