"""On a push to the default branch: build the index and publish it to the index branch.

The previous index is unpacked from the branch first, so `build_index` reuses every
shard whose notes did not change (it verifies each reused file against the old
manifest); a push that touches five notes rebuilds one or two shards, not all of them.
Races with a concurrent run are `publish`'s job: it leases, and rebuilds from the
current commit when it loses, or stops when the branch already holds a newer source.
"""

from __future__ import annotations

import io
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

from kbase_ci.errors import UsageError
from kbase_ci.git import indexbranch
from kbase_ci.git.repo import toplevel
from kbase_ci.index.build import BuildResult, build_index
from kbase_ci.index.manifest import manifest_at
from kbase_ci.index.publish import PublishResult, publish
from kbase_ci.scope.build import build_declared
from kbase_ci.state.files import replace
from kbase_ci.vault.files import Vault


@dataclass(frozen=True)
class IndexOutcome:
    build: BuildResult
    publish: PublishResult
    seeded_from: str | None
    """The index-branch commit the build started from (None: built from scratch)."""
    scopes: tuple[str, ...] = ()
    """One line per scope declared in `.kbase.yml`: built, up to date, or why not."""


def seed_from_branch(repo: Path, remote: str, branch: str, out_dir: Path) -> str | None:
    """Unpack the remote index branch's tip into `out_dir` when `out_dir` holds no index."""
    if (out_dir / "manifest.json").exists():
        return None
    tip = indexbranch.remote_tip(repo, remote, branch)
    if tip is None or manifest_at(repo, tip) is None:
        return None
    data = indexbranch.archive(repo, tip)
    tmp = out_dir.with_name(out_dir.name + ".seed")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        # The `data` filter refuses links, absolute paths and `..`: the branch is data.
        tar.extractall(tmp, filter="data")
    replace(tmp, out_dir)
    return tip


def build_and_publish(root: Path, out_dir: Path, *, branch: str, remote: str = "origin",
                      model: Path | None = None, max_retries: int = 3) -> IndexOutcome:
    repo = toplevel(root)
    if repo is None:
        raise UsageError(f"the index job needs a git repository; {root} is not in one")
    seeded = seed_from_branch(repo, remote, branch, out_dir)

    def rebuild() -> None:  # after a lost push race: the index of the current commit
        build_index(Vault(root), out_dir, model=model)
        build_declared(root, out_dir)

    built = build_index(Vault(root), out_dir, model=model)
    scopes = build_declared(root, out_dir)
    result = publish(repo, out_dir, branch=branch, remote=remote, push=True,
                     max_retries=max_retries, rebuild=rebuild)
    return IndexOutcome(built, result, seeded, scopes)


