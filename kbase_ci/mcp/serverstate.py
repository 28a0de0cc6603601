"""What a long-lived server keeps between calls: the open index and the embedding model.

Every call gets a `QueryView` that is right for the work tree at that moment, so edits,
added and deleted notes are overlaid exactly as the CLI would overlay them. Listing the
vault (`git ls-files` + `diff-files` over every tracked file) is most of a warm call's
cost, so the previous call's view is reused while nothing it depends on moved: the git
index file (add, rm, commit, checkout), `.kbase.yml`, and the set of modified files with
each one's stat (one `git diff-files`). Outside git a view is never reused.

The index itself is reopened only when what `open_source` would pick has moved:
`.kbase/manifest.json` rewritten with other content, the `kbase-index` branch (local or
remote) or HEAD moved, or the `--index` folder rebuilt. One `git show-ref` tells.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.git.indexbranch import ref_stamp
from kbase_ci.git.listing import modified_in_worktree, untracked_files
from kbase_ci.git.repo import git_dir, toplevel
from kbase_ci.index.manifest import MAX_MANIFEST_BYTES
from kbase_ci.index.modelchoice import find_index_model
from kbase_ci.index.modelfolder import load_index_model
from kbase_ci.index.scopes import scope_dir
from kbase_ci.mcp.watch import Watch
from kbase_ci.query.freshness import refresh_stat
from kbase_ci.query.view import QueryView
from kbase_ci.scope.source import open_index_source
from kbase_ci.state.bounded import read_input
from kbase_ci.vault.notefiles import Vault

if TYPE_CHECKING:
    from kbase_ci.query.discovery import IndexSource

REUSE_MAX = 200
"""Calls one view may serve: it caches the note texts it read, so bound its memory."""
TIME_LIMIT = 30.0
"""Default seconds per tool call (MCP clients commonly give up after 60)."""

StatKey = tuple[int, int, int] | None


def _stat(path: Path) -> StatKey:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(read_input(path, MAX_MANIFEST_BYTES, follow_links=False)
                              ).hexdigest()
    except OSError:
        return None


@dataclass(frozen=True)
class Stamp:
    """Where the index would come from now: manifests (by stat) and git refs (by id)."""

    manifests: tuple[tuple[str, StatKey], ...]
    refs: str


class ServerState:
    """The open index source, the embedding models, and what they were opened from
    (state: guarded by `lock` while it changes, as tool calls run on worker threads; a
    view, once handed out, is only read, so answers are computed outside the lock)."""

    def __init__(self, root: Path, *, config_path: Path | None = None,
                 index_dir: Path | None = None, scope: str | None = None,
                 model: Path | None = None, time_limit: float = TIME_LIMIT) -> None:
        self.root = root.resolve()
        self.config_path = config_path
        self.index_dir = index_dir.resolve() if index_dir is not None else None
        self.scope = scope
        self.model = model
        self.lock = threading.RLock()
        self.model_lock = threading.Lock()
        """Held while the embedding model is looked for, downloaded or loaded: not
        `lock`, so a download never makes the other tools wait."""
        self.time_limit = time_limit
        """Seconds a tool call may take before it gets a timeout error (`--timeout`)."""
        self.reopened = 0
        """How many times the source was (re)opened: tests and the bench read it."""
        self._source: IndexSource | None = None
        self._stamp: Stamp | None = None
        self._digests: dict[str, str | None] = {}
        self._embedders: dict[tuple[str, int], tuple[Any, str | None]] = {}
        self._repo_root: Path | None = toplevel(self.root)
        self._git_dir: Path | None = None
        if self._repo_root is not None:
            self._git_dir = git_dir(self.root)
            # Once per server, as the CLI does once per query: in a fresh clone every
            # file is "racily clean" and would be hashed on every call until refreshed.
            refresh_stat(self.root)
        # Started before the first view is built: a change after this point is an event.
        self._watch = Watch.start(self.root) if self._git_dir is not None else None
        self._view: QueryView | None = None
        self._view_key: tuple[Any, ...] | None = None
        self._next_key: tuple[Any, ...] | None = None
        self._view_uses = 0

    # -- what the source depends on -------------------------------------------------------
    def _manifest_paths(self) -> list[Path]:
        main = self.index_dir if self.index_dir is not None else self.root / ".kbase"
        paths = [main / "manifest.json"]
        if self.scope is not None:
            paths.append(scope_dir(main, self.scope) / "manifest.json")
        return paths

    def _stamp_now(self) -> Stamp:
        manifests = tuple((str(p), _stat(p)) for p in self._manifest_paths())
        refs = ""
        if self.index_dir is None and self._repo_root is not None:
            # HEAD plus every ref ending in /kbase-index (local and remote branches).
            refs = ref_stamp(self._repo_root)
        return Stamp(manifests, refs)

    def _quick_key(self) -> tuple[StatKey, StatKey] | None:
        if self._git_dir is None:
            return None
        config = self.config_path if self.config_path is not None else (
            self.root / ".kbase.yml")
        return (_stat(self._git_dir / "index"), _stat(config))

    def _worktree_key(self) -> tuple[Any, ...] | None:
        """What the vault listing depends on, by stat; None outside git."""
        quick = self._quick_key()
        if quick is None:
            return None
        # Untracked notes count for queries too (`vault.untracked`): a new one moves the key.
        modified = sorted(modified_in_worktree(self.root) | untracked_files(self.root))
        return (*quick, tuple((p, _stat(self.root / p)) for p in modified))

    def _unmoved(self) -> bool:
        """Whether the last view's work tree is certainly unchanged: git's index file and
        the config by stat, the files by the watch (no event), else by `git diff-files`."""
        if self._view_key is None:
            return False
        if self._watch is not None and not self._watch.changed():
            return self._quick_key() == self._view_key[:2]
        key = self._worktree_key()
        if key == self._view_key:
            return True
        self._next_key = key
        return False

    def _same_content(self, old: Stamp, new: Stamp) -> bool:
        """A manifest whose stat changed but whose bytes did not (touched, copied back)
        does not need a reopen; refs are compared as they are."""
        if old.refs != new.refs:
            return False
        for (path, before), (_, after) in zip(old.manifests, new.manifests, strict=True):
            if before == after:
                continue
            if before is None or after is None:
                return False
            if _digest(Path(path)) != self._digests.get(path):
                return False
        return True

    # -- per call ---------------------------------------------------------------------------
    def vault(self) -> Vault:
        # The index file's stat is part of the reuse key: listing must not rewrite it.
        return Vault(self.root, config_path=self.config_path, refresh_index=False,
                     untracked=True)

    def _current(self, stamp: Stamp) -> bool:
        """Whether the open source is still the one `open_source` would pick."""
        if self._source is None or self._stamp is None:
            return False
        if stamp == self._stamp or self._same_content(self._stamp, stamp):
            self._stamp = stamp
            return True
        return False

    def source(self, vault: Vault, stamp: Stamp | None = None) -> IndexSource:
        stamp = stamp if stamp is not None else self._stamp_now()
        if self._source is not None and self._current(stamp):
            return self._source
        # Digests before opening: a manifest rewritten in between then differs from them
        # next time and the source is reopened again, never kept stale.
        digests = {path: _digest(Path(path)) for path, st in stamp.manifests
                   if st is not None}
        self._source = self._open(vault)
        self._stamp, self._digests = stamp, digests
        self.reopened += 1
        return self._source

    def _open(self, vault: Vault) -> IndexSource:
        source = open_index_source(vault, self.index_dir, self.scope)
        if source.notice:
            print(source.notice, file=sys.stderr)
        return source

    def view(self) -> QueryView:
        """A view of the work tree as it is now, over the warm index."""
        with self.lock:
            view = self._view_now()
            # Listed now, under the lock: a lazy listing shared by two calls would read
            # one git process from two threads.
            view.vault.notes  # noqa: B018
            return view

    def _view_now(self) -> QueryView:
        stamp = self._stamp_now()
        self._next_key = None
        if (self._view is not None and self._view_uses < REUSE_MAX and self._unmoved()
                and self._current(stamp)):
            self._view_uses += 1
            return self._view
        # Taken before listing: a change racing with this call makes the next call's key
        # differ (or raises an event), never the other way round.
        key = self._next_key if self._next_key is not None else self._worktree_key()
        vault = self.vault()
        self._view = QueryView(vault, self.source(vault, stamp))
        self._view_key, self._view_uses = key, 0
        return self._view

    def embedder(self, view: QueryView) -> tuple[Any, str | None]:
        """The index's embedding model, looked for and loaded once per index model: the
        model, or None and the notice saying how to get it (search passes it on, as the
        CLI does); a download (of the user's own configured model only,
        kbase_ci.index.modelchoice) is tried once, not on every call. Under `model_lock`,
        so two calls never load (or download) the same model twice, while the other
        tools go on answering."""
        with self.model_lock:
            return self._embedder(view)

    def _embedder(self, view: QueryView) -> tuple[Any, str | None]:
        emb = view.manifest.embeddings
        sha, dim = emb.sha256, emb.dim
        if not sha or not dim:
            return None, None
        key = (str(sha), int(dim))
        if key not in self._embedders:
            choice, notice = find_index_model(self.root, view.vault.config.embeddings,
                                              self.model, emb)
            self._embedders[key] = (
                load_index_model(choice.path, int(dim))
                if choice is not None and choice.path is not None else (None, notice))
        got: tuple[Any, str | None] = self._embedders[key]
        return got
