"""On a push to the default branch: build the index from the checked-out commit and
publish it to the index branch.

Nothing of the index branch is reused (issue 28): it once unpacked the branch's tip and
reused every shard whose notes had not changed, checked only against that branch's own
manifest, so a forged shard (its hashes recomputed by anyone who can push to the branch)
was republished under the job's own commit. The job reads only the tip's
`manifest.json` (under a size cap, kbase_ci.index.manifest.manifest_at) to know whether it
holds a newer source, and a branch that is not a valid index is simply replaced.

What a build may start from (issue 40) is the index this job itself built on an earlier
push, kept where no pull request can write: `cache` is the folder the action restores
from the GitHub Actions cache of the default branch (docs/security.md, "CI reuses only
its own builds"). The build then reuses its unchanged shards, each file checked against
that index's manifest and keyed by its notes' blob ids and the model's digest, as `kbase
index` does over its previous `.kbase/`; the result has the bytes a build from nothing
gives. Without a cache (or with one that is not a kbase index) the build starts from
nothing in `.git/kbase-ci/index`, which a previous run on a self-hosted runner may have
left and which is therefore removed first. Races with a concurrent run are `publish`'s
job: it leases, and rebuilds from the current commit when it loses, or stops when the
branch already holds a newer source.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from kbase_ci.errors import IndexFormatError, UsageError
from kbase_ci.git.repo import toplevel
from kbase_ci.index.indexbuild import BuildResult, build_index
from kbase_ci.index.manifest import IndexManifest, read_manifest
from kbase_ci.index.publish import PublishResult, publish
from kbase_ci.index.swap import index_foreign
from kbase_ci.scope.scopebuild import build_declared
from kbase_ci.vault.notefiles import Vault


@dataclass(frozen=True)
class IndexOutcome:
    build: BuildResult
    publish: PublishResult
    scopes: tuple[str, ...] = ()
    """One line per scope declared in `.kbase.yml`: built, up to date, or why not."""
    out_dir: Path | None = None
    """Where the index was built: the cache folder when one was given and usable."""
    seeded_from: str | None = None
    """The source commit of the cached index the build started from (None: from nothing)."""
    cache_note: str | None = None
    """Why the cache folder given was not used (None: used, or none given)."""


def cached_start(cache: Path) -> tuple[str | None, str | None]:
    """(source commit of the index in `cache`, why `cache` cannot be built into). An
    empty or absent folder is a cache miss: (None, None)."""
    if cache.is_symlink() or (os.path.lexists(cache) and not cache.is_dir()):
        return None, f"{cache} is not a folder"
    foreign = index_foreign(cache)
    if foreign is not None:
        return None, f"{cache} is not a kbase index (it holds {foreign})"
    if not (cache / "manifest.json").is_file():
        return None, None
    try:
        manifest = read_manifest(cache)
    except IndexFormatError:
        return None, None  # build_index says why it starts from nothing
    return (manifest.source.commit if isinstance(manifest, IndexManifest) else None), None


def build_and_publish(root: Path, out_dir: Path, *, branch: str, remote: str = "origin",
                      model: Path | None = None, max_retries: int = 3,
                      cache: Path | None = None) -> IndexOutcome:
    """Build the index of the checked-out commit and publish it. `cache`: the folder the
    action restored this workflow's previous build into and saves afterwards; the build
    starts from it and leaves the new index there."""
    repo = toplevel(root)
    if repo is None:
        raise UsageError(f"the index job needs a git repository; {root} is not in one")
    seeded = note = None
    if cache is not None:
        cache = Path(os.path.abspath(cache))
        seeded, note = cached_start(cache)
        if note is None:
            out_dir = cache
    if out_dir != cache and out_dir.is_dir() and not out_dir.is_symlink():
        # Not this workflow's cache: nothing a previous run of the job left is reused. (A
        # link there is left for build_index to refuse.)
        shutil.rmtree(out_dir)

    def rebuild() -> None:  # after a lost push race: the index of the current commit
        build_index(Vault(root), out_dir, model=model)
        build_declared(root, out_dir)

    built = build_index(Vault(root), out_dir, model=model)
    scopes = build_declared(root, out_dir)
    result = publish(repo, out_dir, branch=branch, remote=remote, push=True,
                     max_retries=max_retries, rebuild=rebuild)
    return IndexOutcome(built, result, scopes, out_dir, seeded, note)
