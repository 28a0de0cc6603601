"""Changing the work tree and the git index the way a user would: `git mv`, `git add`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kbase_ci.git.process import git


def move(cwd: Path, old: str, new: str) -> None:
    """`git mv OLD NEW` (paths relative to `cwd`)."""
    git(["mv", "--", old, new], cwd)


def stage(cwd: Path, paths: Sequence[str]) -> None:
    """`git add` these paths (relative to `cwd`)."""
    if paths:
        git(["add", "--", *paths], cwd)
