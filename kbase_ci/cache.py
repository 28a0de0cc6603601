"""Parse cache: ParsedNote rows keyed by blob id, path and parser version.

It lives under the repository's git directory (never the work tree) as one SQLite
file: SQLite gives atomic commits and safe concurrent writers (pre-commit runs several
hook processes at once) for free, and one file reads 10k rows much faster than 10k
small files. Next to each full record it keeps a small summary (aliases, tag names,
link targets) so a hook can learn every note's name and aliases without decoding
10k records. A row that fails to decode is a miss and is rebuilt; a corrupt database
file is set aside and recreated. Rows are JSON, never pickle.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from .model import PARSER_VERSION, ParsedNote
from .notestore import NoteSummary, summarize

# Bump _LAYOUT when the table layout changes; the parser version is part of the stamp.
_LAYOUT = 3
_STAMP = f"{_LAYOUT}:{PARSER_VERSION}"
_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS notes (key TEXT PRIMARY KEY, data TEXT NOT NULL,"
    " aliases TEXT NOT NULL, tags TEXT NOT NULL, targets TEXT NOT NULL, type TEXT NOT NULL)",
)
# SQLite's default limit on host parameters in one statement is 999.
_BATCH = 900


def cache_key(sha: str, path: str, salt: str) -> str:
    return f"{sha}\0{path}\0{salt}"


def _storable(key: str) -> bool:
    """SQLite takes only valid UTF-8; git names a non-UTF-8 file with surrogate escapes,
    and such a note is left uncached (a miss each time) rather than failing the check."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), _BATCH):
        yield items[i:i + _BATCH]


class ParseCache:
    """Opened per command; storage errors are swallowed (a cache must never fail a check)."""

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
                for ddl in _TABLES:
                    db.execute(ddl)
                row = db.execute("SELECT v FROM meta WHERE k='layout'").fetchone()
                if row is None or row[0] != _STAMP:
                    with db:
                        db.execute("BEGIN IMMEDIATE")
                        db.execute("DROP TABLE IF EXISTS notes")
                        db.execute(_TABLES[1])
                        db.execute("INSERT OR REPLACE INTO meta VALUES ('layout', ?)", (_STAMP,))
                return db
            except sqlite3.DatabaseError:
                if attempt == 0:  # corrupt file: set it aside and start again
                    for suffix in ("", "-wal", "-shm"):
                        with contextlib.suppress(OSError):
                            Path(str(path) + suffix).replace(str(path) + suffix + ".corrupt")
        return None

    def hits(self, keys: Sequence[str]) -> set[str]:
        """Which of `keys` have a row (reading keys only: ~10 ms for 10k notes)."""
        if self._db is None or not keys:
            return set()
        try:
            stored = {k for (k,) in self._db.execute("SELECT key FROM notes")}
        except sqlite3.DatabaseError:
            return set()
        return stored.intersection(keys)

    def aliases(self, keys: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Aliases of the rows among `keys` that have any (usually a small minority)."""
        if self._db is None or not keys:
            return {}
        wanted = set(keys)
        out: dict[str, tuple[str, ...]] = {}
        try:
            rows = self._db.execute("SELECT key, aliases FROM notes WHERE aliases != ''")
            for key, aliases in rows:
                if key in wanted:
                    with contextlib.suppress(ValueError):
                        out[key] = tuple(json.loads(aliases))
        except sqlite3.DatabaseError:
            return {}
        return out

    def summaries(self, keys: Sequence[str]) -> dict[str, NoteSummary]:
        """Summaries of the cached rows among `keys` (the rest are misses)."""
        if self._db is None or not keys:
            return {}
        wanted = set(keys)
        out: dict[str, NoteSummary] = {}
        try:
            rows = self._db.execute(
                "SELECT key, aliases, tags, targets, type FROM notes").fetchall()
        except sqlite3.DatabaseError:
            return {}
        for key, aliases, tags, targets, kind in rows:
            if key not in wanted:
                continue
            try:
                al = tuple(json.loads(aliases)) if aliases else ()
            except ValueError:
                continue
            out[key] = NoteSummary(al, tuple(tags.split("\n")) if tags else (),
                                   tuple(targets.split("\n")) if targets else (), kind)
        return out

    def get_many(self, keys: Sequence[str]) -> dict[str, ParsedNote]:
        """Full records for `keys`; rows that fail to decode are left out (misses)."""
        if self._db is None or not keys:
            return {}
        out: dict[str, ParsedNote] = {}
        keys = [k for k in keys if _storable(k)]
        try:
            if len(keys) > 2000:  # most of the vault: one scan beats many lookups
                wanted = set(keys)
                cursor = self._db.execute("SELECT key, data FROM notes")
                rows = [r for r in cursor if r[0] in wanted]
            else:
                rows = []
                for part in _chunks(keys):
                    marks = ",".join("?" * len(part))
                    rows += self._db.execute(
                        f"SELECT key, data FROM notes WHERE key IN ({marks})", part).fetchall()
        except sqlite3.DatabaseError:
            return {}
        for key, data in rows:
            try:
                out[key] = ParsedNote.from_json(json.loads(data))
            except (ValueError, TypeError):
                continue  # a damaged row is simply a miss; put_many overwrites it
        return out

    def put_many(self, items: Iterable[tuple[str, ParsedNote]], live: Sequence[str] = ()) -> None:
        """Store new rows; when `live` (every key of the vault now) is given, drop the rest."""
        if self._db is None:
            return
        rows = []
        for key, note in items:
            if not _storable(key):  # the path is in the key and in the record
                continue
            s = summarize(note)
            rows.append((key, json.dumps(note.to_json(), ensure_ascii=False, separators=(",", ":")),
                         json.dumps(list(s.aliases), ensure_ascii=False) if s.aliases else "",
                         "\n".join(s.tags), "\n".join(s.targets), s.type))
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT OR REPLACE INTO notes VALUES (?, ?, ?, ?, ?, ?)", rows)
                if live:
                    count = self._db.execute("SELECT count(*) FROM notes").fetchone()[0]
                    if count > 2 * len(live) + 100:  # prune rarely: it rewrites the table
                        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS live (key TEXT)")
                        self._db.execute("DELETE FROM live")
                        self._db.executemany("INSERT INTO live VALUES (?)", [(k,) for k in live])
                        self._db.execute(
                            "DELETE FROM notes WHERE key NOT IN (SELECT key FROM live)")
        except sqlite3.DatabaseError:
            return

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.DatabaseError):
                self._db.close()
            self._db = None
