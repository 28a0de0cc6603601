"""Parse cache: ParsedNote rows keyed by blob id, path and parser version.

It lives under the repository's git directory (never the work tree) as one SQLite
file (opened by kbase_ci.state.database: concurrent hook processes, corrupt files set
aside), since one file reads 10k rows much faster than 10k small files. Next to each
full record it keeps a small summary (aliases, tag names, link targets) so a hook can
learn every note's name and aliases without decoding 10k records. A row that fails to
decode is a miss and is rebuilt. Rows are JSON, never pickle.

Summaries live in their own narrow tables, not next to the large `data` column: a scan
of 10k summaries then reads ~3 MB instead of walking every record's overflow pages.
`tag_uses` (one row per note and tag spelling, indexed by the lower-cased tag) lets the
case-variant check look up only the staged notes' tags. Every row is keyed by the
note's cache key (blob id, path, salt) and callers filter by the keys of the vault as
it is now, so no aggregate can go stale. Frontmatter loads by the sha256 of their YAML
text (frontmatter.YamlMemo) are a memo of the state store beside it (kbase_ci.state.memos).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from kbase_ci.parsed import PARSER_VERSION, ParsedNote
from kbase_ci.state.database import close_quietly, open_database
from kbase_ci.vault.notestore import NoteSummary, summarize

# Bump _LAYOUT when the table layout changes; the parser version is part of the stamp.
_LAYOUT = 6
_STAMP = f"{_LAYOUT}:{PARSER_VERSION}"
_DATA_TABLES = {
    "notes": "CREATE TABLE IF NOT EXISTS notes (key TEXT PRIMARY KEY, data TEXT NOT NULL)",
    "summaries": "CREATE TABLE IF NOT EXISTS summaries (key TEXT PRIMARY KEY,"
                 " tags TEXT NOT NULL, targets TEXT NOT NULL, type TEXT NOT NULL)"
                 " WITHOUT ROWID",
    # Only notes that have aliases (a minority): the resolver reads them all.
    "aliases": "CREATE TABLE IF NOT EXISTS aliases (key TEXT PRIMARY KEY, aliases TEXT NOT NULL)"
               " WITHOUT ROWID",
    "tag_uses": "CREATE TABLE IF NOT EXISTS tag_uses (tag TEXT NOT NULL, spelling TEXT NOT NULL,"
                " key TEXT NOT NULL, PRIMARY KEY (tag, spelling, key)) WITHOUT ROWID",
}
# SQLite's default limit on host parameters in one statement is 999.
_BATCH = 900
# Up to this many keys, index lookups beat one scan of a summary table.
_POINT_LOOKUPS = 500


def cache_key(sha: str, path: str, salt: str) -> str:
    return f"{sha}\0{path}\0{salt}"


def key_path(key: str) -> str:
    """The path inside a `cache_key` (cheaper than keeping a key -> path map of 10k notes)."""
    return key.split("\0", 2)[1]


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
            self._db = open_database(self.path, _STAMP, _DATA_TABLES)

    def hits(self, keys: Sequence[str]) -> set[str]:
        """Which of `keys` have a row (reading keys only: ~10 ms for 10k notes)."""
        if self._db is None or not keys:
            return set()
        try:
            stored = {k for (k,) in self._db.execute("SELECT key FROM notes")}
        except sqlite3.DatabaseError:
            return set()
        return stored.intersection(keys)

    def aliases(self, keys: Collection[str]) -> dict[str, tuple[str, ...]]:
        """Aliases of the rows among `keys` that have any (usually a small minority)."""
        rows = self._rows("aliases", "key, aliases", keys)
        try:  # one JSON document for all rows: one C call instead of one per note
            values = json.loads("[" + ",".join(a for _k, a in rows) + "]")
            if len(values) == len(rows):
                return {k: tuple(v) for (k, _a), v in zip(rows, values, strict=True)}
        except ValueError:
            pass
        out: dict[str, tuple[str, ...]] = {}
        for key, aliases in rows:  # a damaged row: decode one by one, skip the bad ones
            with contextlib.suppress(ValueError):
                out[key] = tuple(json.loads(aliases))
        return out

    def summaries(self, keys: Collection[str]) -> dict[str, NoteSummary]:
        """Summaries of the cached rows among `keys` (the rest are misses)."""
        aliases = self.aliases(keys)
        out: dict[str, NoteSummary] = {}
        for key, tags, targets, kind in self._rows("summaries", "key, tags, targets, type",
                                                   keys):
            out[key] = NoteSummary(aliases.get(key, ()),
                                   tuple(tags.split("\n")) if tags else (),
                                   tuple(targets.split("\n")) if targets else (), kind)
        return out

    def _rows(self, table: str, columns: str, keys: Collection[str]) -> list[tuple[str, ...]]:
        """Rows of `table` among `keys`: point lookups for a few, one scan for many."""
        if self._db is None or not keys:
            return []
        try:
            if len(keys) <= _POINT_LOOKUPS:
                rows: list[tuple[str, ...]] = []
                for part in _chunks([k for k in keys if _storable(k)]):
                    marks = ",".join("?" * len(part))
                    rows += self._db.execute(
                        f"SELECT {columns} FROM {table} WHERE key IN ({marks})", part)
                return rows
            wanted = keys if isinstance(keys, (set, frozenset)) else set(keys)
            return [r for r in self._db.execute(f"SELECT {columns} FROM {table}")
                    if r[0] in wanted]
        except sqlite3.DatabaseError:
            return []

    def tag_uses(self, tags: Collection[str], keys: Collection[str]
                 ) -> list[tuple[str, str, str]]:
        """(lower-cased tag, spelling, key) for the `tags` (lower-cased) used by rows among
        `keys`: an index lookup per tag, not a scan of every note's tags."""
        if self._db is None or not tags or not keys:
            return []
        wanted = keys if isinstance(keys, (set, frozenset)) else set(keys)
        out: list[tuple[str, str, str]] = []
        try:
            for part in _chunks(sorted(tags)):
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT tag, spelling, key FROM tag_uses WHERE tag IN ({marks})", part)
                out.extend(r for r in rows if r[2] in wanted)
        except sqlite3.DatabaseError:
            return []
        return out

    def tag_spelling_sets(self, tags: Collection[str]) -> dict[str, set[str]]:
        """Every spelling any row (stale rows too) has for each of `tags` (lower-cased):
        a tag stored one way only cannot be spelled several ways by the vault now."""
        if self._db is None or not tags:
            return {}
        out: dict[str, set[str]] = {}
        try:
            for part in _chunks(sorted(tags)):
                marks = ",".join("?" * len(part))
                for tag, spelling in self._db.execute(
                        f"SELECT DISTINCT tag, spelling FROM tag_uses WHERE tag IN ({marks})",
                        part):
                    out.setdefault(tag, set()).add(spelling)
        except sqlite3.DatabaseError:
            return {}
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

    def put_many(self, items: Iterable[tuple[str, ParsedNote]], live: Sequence[str] = (),
                 summaries: Mapping[str, NoteSummary] | None = None) -> None:
        """Store new rows; when `live` (every key of the vault now) is given, drop the rest.
        `summaries` (by key) saves summarizing notes the caller already summarized."""
        if self._db is None:
            return
        rows, summary_rows, alias_rows, tag_rows = [], [], [], []
        for key, note in items:
            if not _storable(key):  # the path is in the key and in the record
                continue
            s = summaries.get(key) if summaries is not None else None
            if s is None:
                s = summarize(note)
            rows.append((key, json.dumps(note.to_json(), ensure_ascii=False,
                                         separators=(",", ":"))))
            summary_rows.append((key, "\n".join(s.tags), "\n".join(s.targets), s.type))
            if s.aliases:
                alias_rows.append((key, json.dumps(list(s.aliases), ensure_ascii=False)))
            tag_rows += [(t.lower(), t, key) for t in s.tags]
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT OR REPLACE INTO notes VALUES (?, ?)", rows)
                self._db.executemany("INSERT OR REPLACE INTO summaries VALUES (?, ?, ?, ?)",
                                     summary_rows)
                self._db.executemany("INSERT OR REPLACE INTO aliases VALUES (?, ?)", alias_rows)
                # A key's content never changes (blob id in the key), so its tag rows are
                # the same each time they are written.
                self._db.executemany("INSERT OR IGNORE INTO tag_uses VALUES (?, ?, ?)", tag_rows)
                if live:
                    count = self._db.execute("SELECT count(*) FROM notes").fetchone()[0]
                    if count > 2 * len(live) + 100:  # prune rarely: it rewrites the table
                        self._prune(live)
        except sqlite3.DatabaseError:
            return

    def _prune(self, live: Sequence[str]) -> None:
        assert self._db is not None
        self._db.execute("CREATE TEMP TABLE IF NOT EXISTS live (key TEXT PRIMARY KEY)")
        self._db.execute("DELETE FROM live")
        self._db.executemany("INSERT OR IGNORE INTO live VALUES (?)", [(k,) for k in live])
        for name in _DATA_TABLES:
            self._db.execute(f"DELETE FROM {name} WHERE key NOT IN (SELECT key FROM live)")

    def close(self) -> None:
        close_quietly(self._db)
        self._db = None
