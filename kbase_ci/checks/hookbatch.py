"""Which notes one hook process reports on, when pre-commit splits the file list.

pre-commit passes the staged Markdown files (never deleted ones) in argv and, past
the argv limit, splits them over several processes even with `require_serial`. Each
process reports on its own files. Breakage in notes nobody passed (an untouched note
whose link a rename broke) must be reported exactly once, so one process is elected
without talking to the others: the one whose argv holds the first staged Markdown
path. Every process computes the same path from the same index, and pre-commit
gives each file to exactly one process. When a process gets no staged Markdown at
all (pre-commit ran the hook once with no files, or a `files:` filter took them
all), that process reports.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kbase_ci.git.diff import FileChange, staged_paths

if TYPE_CHECKING:
    from kbase_ci.vault.notefiles import Vault

# identify's `markdown` type, which `types: [markdown]` selects.
_MARKDOWN_EXT = (".md", ".markdown")


@dataclass(frozen=True, slots=True)
class HookShare:
    """What a hook run reports on: the notes in focus, and whether to look for inbound breakage."""

    focus: tuple[str, ...]
    """Vault-relative notes to report on in full."""
    inbound: bool
    """Whether this process also reports breakage in notes outside `focus`."""
    elsewhere: frozenset[str]
    """Notes another process of the same run reports on (staged Markdown not in focus)."""
    ignored: tuple[str, ...]
    """File arguments that are not notes of this vault."""


_CONFIG = ".kbase.yml"
"""`vault.config.CONFIG_NAME`, spelled here: the fast path must not import the config."""


def may_break_links(changes: Sequence[FileChange]) -> bool:
    """Cheap test before any scan: does the change set touch Markdown at all, move or
    delete a file a note could embed, or change `.kbase.yml` (validated, and its new
    policy applied)? Decided on paths alone, before the vault config is even read."""
    return any(c.kind in ("deleted", "renamed") or c.path.lower().endswith(".md")
               or c.path == _CONFIG for c in changes)


def touches_notes(vault: Vault, changes: Sequence[FileChange]) -> bool:
    """Whether the change set adds, edits, deletes or renames a note of this vault, or
    changes its `.kbase.yml`."""
    return any(vault.is_note_path(c.path) or (c.old_path and vault.is_note_path(c.old_path))
               or c.kind in ("deleted", "renamed") or _CONFIG in (c.path, c.old_path)
               for c in changes)


def staged_share(vault: Vault, changes: Sequence[FileChange],
                 files: Sequence[str] | None) -> HookShare:
    staged_notes = [c.path for c in changes
                    if c.kind != "deleted" and vault.note(c.path) is not None]
    if not files:
        return HookShare(tuple(sorted(set(staged_notes))), True, frozenset(), ())
    chosen, ignored = vault.select(files)
    focus = tuple(sorted({n.path for n in chosen}))
    repo = (vault.repo_root or vault.root).resolve()
    markdown = _staged_markdown(vault, changes, repo)
    given = {_repo_relative(f, repo) for f in files}
    mine = given & markdown
    inbound = not mine or min(markdown) in mine
    elsewhere = frozenset(staged_notes) - set(focus)
    return HookShare(focus, inbound, elsewhere, tuple(ignored))


def _staged_markdown(vault: Vault, changes: Sequence[FileChange], repo: Path) -> set[str]:
    """Repo-relative paths pre-commit passes to a `types: [markdown]` hook this commit."""
    if vault.root == repo:
        paths = [c.path for c in changes if c.kind != "deleted"]
    else:  # the vault is a sub-folder: pre-commit still passes files from the whole repo
        paths = staged_paths(repo)
    return {p for p in paths
            if p.lower().endswith(_MARKDOWN_EXT) and _plain_file(repo / p)}


def _plain_file(path: Path) -> bool:
    # pre-commit classifies with lstat: a symlink is never `markdown`.
    return path.is_file() and not path.is_symlink()


def _repo_relative(arg: str, repo: Path) -> str:
    full = os.path.normpath(arg if os.path.isabs(arg) else os.path.join(os.getcwd(), arg))
    try:
        return Path(full).relative_to(repo).as_posix()
    except ValueError:
        return full
