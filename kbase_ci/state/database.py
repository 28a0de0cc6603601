"""SQLite files under the git dir (the parse cache, the state store), opened one way.

SQLite gives atomic commits and safe concurrent writers (pre-commit runs several hook
processes at once) for free. Each file carries a layout stamp in a `meta` table: a file
of another layout has its tables dropped and made again (everything in these files can
be computed again). A file another process is setting up is waited for; a corrupt one
is set aside (`NAME.corrupt`) and made again; anything else (a read-only folder, a full
disk) gives None: the caller runs without it, since a cache or a memo must never fail
a command.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path

from kbase_ci.state.files import replace

_META = "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)"
# Opening a file another process is setting up can be refused as busy; tries, ~2 s in all.
_OPEN_ATTEMPTS = 12
_WITHOUT: dict[str, str] = {}
"""Folders whose databases this process could not open, with why (`unopened`)."""


def unopened() -> dict[str, str]:
    """The folders this process runs without caches and memos in (a read-only folder, a
    full disk, a file in the way), each with why: the CLI says so once on stderr."""
    return dict(_WITHOUT)


def _without(path: Path, exc: BaseException) -> None:
    _WITHOUT.setdefault(str(path.parent), str(exc) or type(exc).__name__)


def close_quietly(db: sqlite3.Connection | None) -> None:
    if db is not None:
        with contextlib.suppress(sqlite3.Error):
            db.close()


def open_database(path: Path, stamp: str, tables: Mapping[str, str], *,
                  threads: bool = False) -> sqlite3.Connection | None:
    """The database at `path` (created with its folder), in WAL mode and autocommit,
    holding `tables` (name -> CREATE statement) of layout `stamp`; None when it cannot
    be had. `threads`: the connection may be used from other threads (the caller
    serialises its calls)."""
    set_aside = False
    for attempt in range(_OPEN_ATTEMPTS):
        db: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=30, isolation_level=None,
                                 check_same_thread=not threads)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_META)
            row = db.execute("SELECT v FROM meta WHERE k='layout'").fetchone()
            if row is None or row[0] != stamp:
                with db:
                    db.execute("BEGIN IMMEDIATE")
                    row = db.execute("SELECT v FROM meta WHERE k='layout'").fetchone()
                    # Another process may have set the file up meanwhile.
                    stale = row is None or row[0] != stamp
                    for name, ddl in tables.items():
                        if stale:
                            db.execute(f"DROP TABLE IF EXISTS {name}")
                        db.execute(ddl)
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('layout', ?)", (stamp,))
            return db
        except sqlite3.OperationalError as exc:
            # Busy or locked: another process (pre-commit runs hooks in parallel) is
            # creating the file or switching it to WAL. That is no corruption: wait
            # and open it again (setting it aside lost the other process's rows).
            # Anything else (a read-only folder, a full disk): run without it.
            close_quietly(db)
            if "locked" not in str(exc) and "busy" not in str(exc):
                _without(path, exc)
                return None
            time.sleep(0.02 * (attempt + 1))
        except sqlite3.DatabaseError as exc:
            close_quietly(db)
            if set_aside:
                _without(path, exc)
                return None
            set_aside = True  # corrupt file: set it aside and start again
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(OSError):
                    replace(Path(str(path) + suffix), Path(str(path) + suffix + ".corrupt"))
        except OSError as exc:  # the folder cannot be made (read-only, a file in the way)
            close_quietly(db)
            _without(path, exc)
            return None
    return None
