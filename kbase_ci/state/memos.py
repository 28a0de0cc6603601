"""The state store: what kbase remembers between commands, one SQLite file beside the
parse cache (`<git dir>/kbase/state.sqlite`), one table per memo.

- `config` (kbase_ci.vault.configsource): `.kbase.yml`'s settings as JSON, by the sha256 of
  the file, its path and kbase's version;
- `remote_miss` (kbase_ci.query.discovery): when a remote last had no index branch, by
  the remote's name;
- `validated` (kbase_ci.index.integrity): the index manifests validated or built here,
  by their sha256;
- `refused` (kbase_ci.index.integrity): index branch trees refused here, with the
  reason, by their git tree id and kbase's version (issue 28: a refused 7.6 GiB branch
  was streamed and hashed again by every query);
- `fix` (kbase_ci.checks.fixmemo): what `kbase fix --staged` rewrote, as JSON, by the
  vault's root, for the check that runs next;
- `yaml` (kbase_ci.parse.frontmatter.YamlMemo): frontmatter loads as JSON, by the
  sha256 of their YAML text;
- `model_miss` (kbase_ci.index.modelchoice): when a query's download of a model last
  failed and why, by the hub, the model id and its revision.

Every memo has one lifetime rule: at most `KEEP[memo]` rows, the least recently written
dropped first; a memo is a shortcut, so a dropped row only costs the work again. The
whole file can be deleted at any time. A store that cannot be opened (a read-only git
dir, a full disk) remembers nothing and fails nothing. The parse cache
(kbase_ci.vault.cache) stays a file of its own: its rows are large derived records in
several tables tuned for reading 10k notes at once, stamped with the parser version and
dropped whole when that changes; the memos here outlive parser versions.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from kbase_ci.state.database import close_quietly, open_database

Memo = Literal["config", "remote_miss", "validated", "refused", "fix", "yaml", "model_miss"]
KEEP: dict[Memo, int] = {"config": 32, "remote_miss": 64, "validated": 512, "refused": 64,
                         "fix": 16,
                         "yaml": 200_000, "model_miss": 16}
"""Rows each memo keeps (the least recently written beyond that are dropped)."""
STORE_FILE = "state.sqlite"
_LAYOUT = "1"
_TABLES: dict[str, str] = {
    m: f"CREATE TABLE IF NOT EXISTS {m} (key TEXT PRIMARY KEY, value TEXT NOT NULL,"
       " at REAL NOT NULL) WITHOUT ROWID" for m in KEEP}
# SQLite's default limit on host parameters in one statement is 999.
_BATCH = 900


class StateStore:
    """The memos of one git dir (state: the connection, opened on first use, and a lock
    serialising the threads of a server)."""

    def __init__(self, folder: Path | None) -> None:
        self.path = folder / STORE_FILE if folder is not None else None
        self._db: sqlite3.Connection | None = None
        self._opened = False
        self._lock = threading.Lock()
        self.file_id: tuple[int, int] | None = None
        """The file opened (device, inode): `state_store` opens again once it changed."""

    def _conn(self) -> sqlite3.Connection | None:
        if not self._opened:
            self._opened = True
            if self.path is not None:
                self._db = open_database(self.path, _LAYOUT, _TABLES, threads=True)
                self.file_id = _file_id(self.path) if self._db is not None else None
        return self._db

    def get(self, memo: Memo, key: str) -> str | None:
        return self.get_many(memo, [key]).get(key)

    def get_many(self, memo: Memo, keys: Sequence[str]) -> dict[str, str]:
        """The remembered values of those of `keys` that have one."""
        out: dict[str, str] = {}
        with self._lock:
            db = self._conn()
            if db is None or not keys:
                return out
            try:
                for i in range(0, len(keys), _BATCH):
                    part = list(keys[i:i + _BATCH])
                    marks = ",".join("?" * len(part))
                    out.update(db.execute(
                        f"SELECT key, value FROM {memo} WHERE key IN ({marks})", part))
            except (sqlite3.DatabaseError, ValueError):  # ValueError: not UTF-8
                return {}
        return out

    def all(self, memo: Memo) -> dict[str, str]:
        with self._lock:
            db = self._conn()
            if db is None:
                return {}
            try:
                return dict(db.execute(f"SELECT key, value FROM {memo}"))
            except sqlite3.DatabaseError:
                return {}

    def put(self, memo: Memo, key: str, value: str) -> None:
        self.put_many(memo, [(key, value)])

    def put_many(self, memo: Memo, items: Iterable[tuple[str, str]] | Mapping[str, str]
                 ) -> None:
        """Remember `items` (key, value), replacing what those keys held."""
        rows = list(items.items() if isinstance(items, Mapping) else items)
        with self._lock:
            db = self._conn()
            if db is None or not rows:
                return
            now = time.time()
            try:
                with db:
                    db.execute("BEGIN IMMEDIATE")
                    db.executemany(f"INSERT OR REPLACE INTO {memo} VALUES (?, ?, ?)",
                                   [(k, v, now) for k, v in rows])
                    over = db.execute(f"SELECT count(*) FROM {memo}").fetchone()[0] \
                        - KEEP[memo]
                    if over > 0:
                        db.execute(f"DELETE FROM {memo} WHERE key IN (SELECT key FROM "
                                   f"{memo} ORDER BY at, key LIMIT ?)", (over,))
            except (sqlite3.DatabaseError, UnicodeEncodeError):
                return  # a memo never fails a command

    def delete(self, memo: Memo, key: str) -> None:
        with self._lock:
            db = self._conn()
            if db is None:
                return
            try:
                db.execute(f"DELETE FROM {memo} WHERE key = ?", (key,))
            except sqlite3.DatabaseError:
                return

    def close(self) -> None:
        with self._lock:
            close_quietly(self._db)
            self._db, self._opened = None, False


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


_STORES: OrderedDict[tuple[int, str], StateStore] = OrderedDict()
_STORES_LOCK = threading.Lock()
# Stores kept open at once (three descriptors each: the file, its WAL and shared memory).
# A process that visits many repositories (a test run, a library user) closes the least
# recently used instead of running out of descriptors; one closed that is used again
# opens its file again.
_OPEN_STORES = 8


def state_store(folder: Path | None) -> StateStore:
    """The store in `folder` (`<git dir>/kbase`; None: one that keeps nothing), one per
    process (a forked worker opens its own: SQLite connections do not cross a fork), and
    opened again when its file was deleted or replaced meanwhile."""
    if folder is None:
        return StateStore(None)
    key = (os.getpid(), str(folder))
    with _STORES_LOCK:
        found = _STORES.get(key)
        if found is not None and found.file_id is not None and \
                _file_id(folder / STORE_FILE) != found.file_id:
            found.close()
            found = None
        if found is None:
            found = _STORES[key] = StateStore(folder)
            while len(_STORES) > _OPEN_STORES:
                _STORES.popitem(last=False)[1].close()
        _STORES.move_to_end(key)
        return found
