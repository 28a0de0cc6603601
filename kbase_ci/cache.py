"""Parse cache: ParsedNote rows keyed by blob id, path and parser version.

It lives under the repository's git directory (never the work tree) as one SQLite
file: SQLite gives atomic commits and safe concurrent writers (pre-commit runs several
hook processes at once) for free, and one file reads 10k rows much faster than 10k
small files. A row that fails to decode is ignored and rebuilt; a corrupt database
file is set aside and recreated. Rows are JSON, never pickle.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from .model import PARSER_VERSION, ParsedNote

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notes (key TEXT PRIMARY KEY, data TEXT NOT NULL);
"""


def cache_key(sha: str, path: str, salt: str) -> str:
    return f"{sha}\0{path}\0{salt}"


class ParseCache:
    """Opened per command; all methods swallow storage errors (a cache must never fail a check)."""

    def __init__(self, folder: Path | None) -> None:
        self.path = folder / "parse-cache.sqlite" if folder is not None else None
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
            self._db = self._open(self.path)

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection | None:
        for attempt in range(2):
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(path, timeout=30, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(_SCHEMA)
                row = db.execute("SELECT v FROM meta WHERE k='parser'").fetchone()
                if row is None or row[0] != str(PARSER_VERSION):
                    with db:
                        db.execute("BEGIN IMMEDIATE")
                        db.execute("DELETE FROM notes")
                        db.execute("INSERT OR REPLACE INTO meta VALUES ('parser', ?)",
                                   (str(PARSER_VERSION),))
                return db
            except sqlite3.DatabaseError:
                if attempt == 0:  # corrupt file: set it aside and start again
                    for suffix in ("", "-wal", "-shm"):
                        with contextlib.suppress(OSError):
                            Path(str(path) + suffix).replace(str(path) + suffix + ".corrupt")
        return None

    def get_many(self, keys: Sequence[str]) -> dict[str, ParsedNote]:
        if self._db is None or not keys:
            return {}
        wanted = set(keys)
        out: dict[str, ParsedNote] = {}
        try:
            # One full scan beats 10k point lookups; stale rows are pruned by `put_many`.
            rows = self._db.execute("SELECT key, data FROM notes").fetchall()
        except sqlite3.DatabaseError:
            return {}
        for key, data in rows:
            if key not in wanted:
                continue
            try:
                out[key] = ParsedNote.from_json(json.loads(data))
            except (ValueError, TypeError):
                continue  # a damaged row is simply a miss; put_many overwrites it
        return out

    def put_many(self, items: Iterable[tuple[str, ParsedNote]], live: Sequence[str] = ()) -> None:
        """Store new rows; when `live` (every key of the vault now) is given, drop the rest."""
        if self._db is None:
            return
        rows = [(k, json.dumps(n.to_json(), ensure_ascii=False, separators=(",", ":")))
                for k, n in items]
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT OR REPLACE INTO notes VALUES (?, ?)", rows)
                if live:
                    count = self._db.execute("SELECT count(*) FROM notes").fetchone()[0]
                    if count > 2 * len(live) + 100:  # prune rarely: it rewrites the table
                        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS live (key TEXT)")
                        self._db.execute("DELETE FROM live")
                        self._db.executemany("INSERT INTO live VALUES (?)", [(k,) for k in live])
                        self._db.execute("DELETE FROM notes WHERE key NOT IN (SELECT key FROM live)")
        except sqlite3.DatabaseError:
            return

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.DatabaseError):
                self._db.close()
            self._db = None
