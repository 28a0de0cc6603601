"""The vault: which files are notes, and what each note's content is.

Notes are tracked files. `git ls-files -s` gives path and blob id; in `staged` mode
(pre-commit) the index blob is the truth, otherwise a tracked file edited in the work
tree is read from disk. Untracked files are not notes, except for a reader of the work
tree that asks for them (`untracked=True`: queries, `kbase handover check`) while
`vault.untracked` allows: a note an agent just wrote exists before anyone `git add`s it.
Ignored files never are. Outside a git repository a directory walk stands in, and
`mode` says so, so reports can tell the user.

The listing's records are here too: a file and its blob id (`NoteFile`), what git says
of the work tree (`ListingStatus`), which paths are never notes (`is_hidden`), and the
listing outside git (`walk`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Literal, NamedTuple

from kbase_ci.errors import UsageError
from kbase_ci.git.listing import (
    GITLINK,
    SYMLINK,
    WorktreeListing,
    ls_files_rows,
    ls_tree,
)
from kbase_ci.git.objects import blob_sha
from kbase_ci.git.repo import repo_dirs
from kbase_ci.state.bounded import read_input
from kbase_ci.vault.config import CONFIG_NAME, Config
from kbase_ci.vault.configsource import config_at, load_vault_config, staged_config
from kbase_ci.vault.globs import any_match
from kbase_ci.vault.worktreeblobs import read_contents

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


class Vault:
    """A vault root, its config, and its file listing (state: the listing and read cache)."""

    def __init__(self, root: Path, config: Config | None = None, *, staged: bool = False,
                 config_path: Path | None = None, rev: str | None = None,
                 refresh_index: bool = True, untracked: bool = False) -> None:
        """`rev`: read the vault as it is in that commit (PR reports compare two commits);
        its `.kbase.yml` is read from the commit too, unless `config` is given.
        `refresh_index=False`: list work-tree changes without letting git write its index
        file (a long-lived process that watches that file's stat passes it).
        `untracked`: untracked, unignored notes of the work tree count (when
        `vault.untracked` allows)."""
        root = root.resolve()
        if not root.is_dir():
            raise UsageError(f"vault folder does not exist: {root}")
        self.root = root
        dirs = repo_dirs(root)
        self.repo_root = dirs[0] if dirs is not None else None
        self.git_dir = dirs[1] if dirs is not None else None
        self.rev = rev
        if rev is not None and self.repo_root is None:
            raise UsageError(f"cannot read revision {rev}: {root} is not in a git repository")
        if config is None and rev is not None and config_path is None:
            config = config_at(root, rev)
        # A hook judges the index with the index's `.kbase.yml` (issue 38): listed first.
        staged_rows = ls_files_rows(root) if staged and rev is None and \
            self.repo_root is not None else None
        if config is None and config_path is None and staged_rows is not None:
            config = staged_config(root, next((r for r in staged_rows if r[0] == CONFIG_NAME),
                                              None), self.git_dir)
        self.config = config if config is not None else load_vault_config(
            root, config_path, self.git_dir)
        self._content: dict[str, bytes] = {}
        self._symlinks: set[str] = set()
        self._gitlinks: frozenset[str] = frozenset()
        folders = self.config.vault.folders
        # `str.startswith` with a tuple: one C call per path instead of a Python loop.
        self._folders: tuple[str, ...] = () if not folders or "." in folders else tuple(
            f.strip("/") + "/" for f in folders)
        self._notes: tuple[NoteFile, ...] | None = None
        self._adopted: Callable[[], Sequence[NoteFile]] | None = None
        self._files: tuple[str, ...] | None = None
        self._by_path: dict[str, NoteFile] = {}
        # Work-tree mode lists lazily: `git status` and `git ls-files` start now, and a
        # query whose index is exactly this vault (`unchanged_since`) never reads the
        # listing (10k entries: ~10 ms of Python).
        self._listing: WorktreeListing | None = None
        self._status: ListingStatus | None = None
        self._untracked = False
        if rev is not None:
            self.mode: VaultMode = "git-commit"
            self._set(self._list_rev(rev))
        elif self.repo_root is None:
            self.mode = "walk"
            self._set(walk(self.root, self._file_entry))
        elif staged:
            self.mode = "git-index"
            self._set(self._entries(staged_rows if staged_rows is not None
                                    else ls_files_rows(self.root)))
        else:
            self.mode = "git-worktree"
            self._untracked = untracked and self.config.vault.untracked
            self._listing = WorktreeListing(self.root, write_index=refresh_index,
                                            untracked=self._untracked)

    def _set(self, entries: list[NoteFile]) -> None:
        entries.sort()  # by path: no two entries share one
        self._files = tuple(e.path for e in entries)
        self._notes = tuple(self._notes_among(entries))
        self._by_path = {n.path: n for n in self._notes}

    @property
    def notes(self) -> tuple[NoteFile, ...]:
        """The notes, sorted by path."""
        return self._listed()

    def _listed(self) -> tuple[NoteFile, ...]:
        """The notes, listing the work tree first if that has not happened yet (it also
        reads work-tree edits into `_content` and fills `_by_path`)."""
        if self._notes is None:
            if self._adopted is not None:
                self._take(self._adopted())
            else:
                self._list_worktree()
        assert self._notes is not None
        return self._notes

    @property
    def files(self) -> tuple[str, ...]:
        """Every tracked file (notes and attachments), sorted."""
        if self._files is None:
            self._list_worktree()
        assert self._files is not None
        return self._files

    @property
    def gitlinks(self) -> frozenset[str]:
        """Submodules (vault-relative paths): kbase never writes into one."""
        self.files  # noqa: B018 (lists the work tree if that has not happened yet)
        return self._gitlinks

    # -- listing -------------------------------------------------------------------
    def _entries(self, rows: list[tuple[str, str, str]]) -> list[NoteFile]:
        self._symlinks = {path for path, _sha, mode in rows if mode == SYMLINK}
        # tuple.__new__ directly: NoteFile(...) goes through a Python-level __new__,
        # ~40% slower over the 10k entries every hook run and query builds.
        new = tuple.__new__
        out = [new(NoteFile, (path, sha)) for path, sha, mode in rows if mode != GITLINK]
        if len(out) != len(rows):  # submodules: rare, so only then a second pass
            self._gitlinks = frozenset(path for path, _sha, mode in rows if mode == GITLINK)
        return out

    def _status_now(self) -> ListingStatus:
        if self._status is None:
            if self._listing is None:  # not a work-tree vault
                self._status = ListingStatus(None, frozenset(), False, ())
            else:
                got = self._listing.status(self.prefix())
                extra = tuple(sorted(got.untracked)) if self._untracked else ()
                self._status = ListingStatus(got.head, frozenset(got.modified), got.changed,
                                             extra)
        return self._status

    def _list_worktree(self) -> None:
        status = self._status_now()
        rows = self._listing.rows() if self._listing is not None else ls_files_rows(self.root)
        entries = self._entries(rows)
        if status.modified:
            entries = self._read_modified(entries, status.modified)
        self._set(entries + self._read_untracked(status.untracked))

    def _read_untracked(self, paths: Sequence[str]) -> list[NoteFile]:
        """Untracked files as entries: notes with the blob id of their content (read now),
        other files (attachments) by name; symbolic links are never notes."""
        return [self._file_entry(rel, self.root / rel) for rel in paths]

    def _file_entry(self, rel: str, full: Path) -> NoteFile:
        """A file read from disk: a note with the blob id of its content (kept), another
        file (an attachment: only its name matters) or a symbolic link by name."""
        if full.is_symlink() or not full.is_file():
            self._symlinks.add(rel)
            return NoteFile(rel, "")
        if not self.is_note_path(rel):
            return NoteFile(rel, "")
        try:
            data = self._read(full)
        except OSError:  # replaced since it was listed (a link, a FIFO): by name only
            self._symlinks.add(rel)
            return NoteFile(rel, "")
        sha = blob_sha(data)
        self._content[sha] = data
        return NoteFile(rel, sha)

    def _read(self, full: Path) -> bytes:
        """A note's bytes from the work tree: a regular file of the vault, never read
        through a link (kbase_ci.state.bounded); an OSError otherwise."""
        return read_input(full, within=self.root, follow_links=False)

    def _read_modified(self, entries: list[NoteFile], modified: frozenset[str]
                       ) -> list[NoteFile]:
        out: list[NoteFile] = []
        for e in entries:
            if e.path not in modified or e.path in self._symlinks:
                out.append(e)
                continue
            try:
                data = self._read(self.root / e.path)
            except OSError:  # deleted in the work tree, or no file there: not a note
                continue
            sha = blob_sha(data)
            self._content[sha] = data
            out.append(NoteFile(e.path, sha))
        return out

    def unchanged_since(self, commit: str) -> bool:
        """True when HEAD is `commit` and no tracked file of the vault differs from it,
        staged or not (work-tree mode only): the notes are then exactly that commit's."""
        if self.mode != "git-worktree":
            return False
        status = self._status_now()
        return status.head == commit and not status.changed and not any(
            self.is_note_path(p) for p in status.untracked)

    def worktree_moves(self) -> tuple[tuple[str, ...], frozenset[str]]:
        """Untracked files (when counted) and tracked ones the work tree may differ on."""
        return self._status_now().untracked, self._status_now().modified

    def adopt_notes(self, notes: Callable[[], Sequence[NoteFile]]) -> None:
        """Take what `notes()` gives (sorted by path) as this vault's notes without
        listing them: the caller knows them (an index of the commit `unchanged_since`
        confirmed). Made when first asked for: a query that never looks at the vault's
        notes (`backlinks` from an up-to-date index) spares making 38k of them (~30 ms on
        tldr-pages). The file list, if ever asked for, is listed then."""
        self._notes = None
        self._adopted = notes

    def _take(self, notes: Sequence[NoteFile]) -> None:
        self._notes = tuple(notes)
        self._by_path = {n.path: n for n in self._notes}

    def prefix(self) -> str:
        """The vault root below the repository root, as git names it ("" or "a/b/"; ""
        outside a git work tree)."""
        if self.repo_root is None:
            return ""
        rel = self.root.relative_to(self.repo_root.resolve()).as_posix()
        return "" if rel == "." else rel + "/"

    def _list_rev(self, rev: str) -> list[NoteFile]:
        out: list[NoteFile] = []
        gitlinks = []
        for e in ls_tree(self.root, rev):
            if e.mode == GITLINK:
                gitlinks.append(e.path)
                continue
            if e.mode == SYMLINK:
                self._symlinks.add(e.path)
            out.append(NoteFile(e.path, e.sha))
        self._gitlinks = frozenset(gitlinks)
        return out

    def _notes_among(self, entries: list[NoteFile]) -> list[NoteFile]:
        """`is_note_path` over a whole listing, one cheap test at a time (10k files)."""
        found = [e for e in entries if e.path[-3:].lower() == ".md"]
        if not self.config.vault.include_dot_folders:
            found = [e for e in found if not is_hidden(e.path)]
        if self._folders:
            found = [e for e in found if e.path.startswith(self._folders)]
        if self.config.vault.exclude:
            found = [e for e in found if not any_match(self.config.vault.exclude, e.path)]
        if self._symlinks:
            found = [e for e in found if e.path not in self._symlinks]
        return found

    def is_note_path(self, path: str) -> bool:
        if not path.lower().endswith(".md"):
            return False
        if is_hidden(path) and not self.config.vault.include_dot_folders:
            return False
        if self._folders and not path.startswith(self._folders):
            return False
        return not (self.config.vault.exclude and any_match(self.config.vault.exclude, path))

    # -- content -------------------------------------------------------------------
    def note(self, path: str) -> NoteFile | None:
        self._listed()
        return self._by_path.get(path)

    def read(self, notes: Iterable[NoteFile]) -> dict[str, bytes]:
        """Content of each note by path: a work-tree file that is the blob, else git's."""
        wanted = list(notes)
        self._listed()  # the listing reads work-tree edits into `_content`
        missing = [n for n in wanted if n.sha not in self._content]
        if missing:
            if self.repo_root is None:  # cannot happen: walk mode reads everything
                raise UsageError("note content is not available")
            self._content.update(read_contents(self.root, missing, files=self.rev is None))
        return {n.path: self._content[n.sha] for n in wanted}

    def select(self, paths: Sequence[str]) -> tuple[list[NoteFile], list[str]]:
        """Notes for user-given file arguments (relative to cwd or absolute); also returns
        the arguments that are not notes of this vault (outside it, excluded, untracked)."""
        found: list[NoteFile] = []
        rejected: list[str] = []
        self._listed()
        for arg in paths:
            rel = self.relative(arg)
            nf = self._by_path.get(rel) if rel is not None else None
            if nf is None:
                rejected.append(arg)
            else:
                found.append(nf)
        return found, rejected

    def relative(self, arg: str) -> str | None:
        full = Path(arg) if os.path.isabs(arg) else Path.cwd() / arg
        try:
            return Path(os.path.normpath(full)).relative_to(self.root).as_posix()
        except ValueError:
            return None
