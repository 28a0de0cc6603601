"""The records of a vault's listing: a file and its blob id (`NoteFile`), what git says
of the work tree (`ListingStatus`), which paths are never notes (`is_hidden`), and the
listing outside git (`walk`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal, NamedTuple

VaultMode = Literal["git-index", "git-worktree", "git-commit", "walk"]

# Folders a directory walk never enters: tool state, not notes.
_WALK_SKIP = {".git", ".obsidian", ".kbase", ".trash", "node_modules", "__pycache__"}


def is_hidden(path: str) -> bool:
    """Rule 5 of docs/resolution.md: a file or folder whose name starts with `.` is not
    part of an Obsidian vault (`.github/x.md`, `.obsidian/`, `notes/.draft.md`), so it
    is no note and no link target unless `vault.include_dot_folders` says otherwise."""
    return path.startswith(".") or "/." in path


class NoteFile(NamedTuple):
    """A tracked file and its content's blob id. A NamedTuple, not a dataclass: the hook
    builds one per file of the vault on every commit, and a tuple is ~3x cheaper."""

    path: str
    """Vault-relative POSIX path."""
    sha: str
    """Git blob id of the content that will be parsed."""


class ListingStatus(NamedTuple):
    """What `git status` says of a work-tree vault."""

    head: str | None
    """HEAD's commit id (None before the first commit, or outside a work tree)."""
    modified: frozenset[str]
    """Vault-relative paths whose work-tree content may differ from the git index."""
    changed: bool
    """Any tracked file of the vault differs from HEAD (staged or not)."""
    untracked: tuple[str, ...]
    """Untracked, unignored files of the vault (when asked for and allowed)."""


def walk(root: Path, entry: Callable[[str, Path], NoteFile]) -> list[NoteFile]:
    """Every file below `root` outside git (`entry` reads one: vault-relative path, full
    path), folders of tool state skipped."""
    out: list[NoteFile] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _WALK_SKIP)
        rel_dir = Path(dirpath).relative_to(root)
        out.extend(entry((rel_dir / name).as_posix(), Path(dirpath) / name)
                   for name in filenames)
    return out
