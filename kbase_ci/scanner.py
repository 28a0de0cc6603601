"""Turn a vault's notes into ParsedNote records: cache hits first, then parse the rest.

`open_store` is the fast path: it parses only cache misses and returns a NoteStore
that decodes cached records on demand. Cold parsing is CPU bound (tree-sitter), so
large batches of misses are spread over worker processes (both cores of a runner).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .cache import ParseCache, cache_key
from .model import ParsedNote
from .notestore import LazySummaries, NoteStore, NoteSummary, summarize
from .vault import NoteFile, Vault

# Below this much unparsed text, starting worker processes costs more than it saves.
_PARALLEL_MIN_BYTES = 4_000_000


@dataclass(frozen=True, slots=True)
class ScanStats:
    notes: int
    cached: int
    parsed: int
    bytes_parsed: int
    seconds: float
    jobs: int


def open_store(vault: Vault, subset: Sequence[NoteFile] | None = None, *,
               jobs: int | None = None, use_cache: bool = True) -> tuple[NoteStore, ScanStats]:
    """Every note (or `subset`) as a NoteStore; only cache misses are parsed now."""
    t0 = time.perf_counter()
    notes = list(vault.notes if subset is None else subset)
    salt = str(vault.config.vault.max_note_bytes)
    max_bytes = vault.config.vault.max_note_bytes
    key_of = {n.path: cache_key(n.sha, n.path, salt) for n in notes}
    by_path = {n.path: n for n in notes}
    cache = ParseCache(vault.git_dir / "kbase" if use_cache and vault.git_dir else None)
    hit_keys = cache.hits(list(key_of.values()))
    misses = [n for n in notes if key_of[n.path] not in hit_keys]
    contents = vault.read(misses)
    bytes_parsed = sum(len(b) for b in contents.values())
    n_jobs = _jobs(jobs, bytes_parsed)
    fresh = {p.path: p for p in parse_many([(n.path, contents[n.path]) for n in misses],
                                           max_bytes, n_jobs)}
    if fresh:
        cache.put_many([(key_of[p], note) for p, note in fresh.items()],
                       list(key_of.values()) if subset is None else ())
    hit_paths = [p for p, k in key_of.items() if k in hit_keys]
    fresh_summaries = {p: summarize(n) for p, n in fresh.items()}
    path_of = {k: p for p, k in key_of.items()}

    def fetch_summaries() -> dict[str, NoteSummary]:
        rows = cache.summaries([key_of[p] for p in hit_paths])
        return {path_of[k]: s for k, s in rows.items()}

    def all_aliases() -> dict[str, tuple[str, ...]]:
        got = {path_of[k]: a for k, a in cache.aliases([key_of[p] for p in hit_paths]).items()}
        got.update({p: s.aliases for p, s in fresh_summaries.items() if s.aliases})
        return got

    def load(paths: Sequence[str]) -> dict[str, ParsedNote]:
        got = cache.get_many([key_of[p] for p in paths])
        out = {p: got[key_of[p]] for p in paths if key_of[p] in got}
        lost = [by_path[p] for p in paths if p not in out]  # a row vanished or is damaged
        if lost:
            data = vault.read(lost)
            again = parse_many([(n.path, data[n.path]) for n in lost], max_bytes)
            cache.put_many([(key_of[n.path], n) for n in again])
            out.update({n.path: n for n in again})
        return out

    summaries = LazySummaries(hit_paths, fetch_summaries, fresh_summaries)
    store = NoteStore(list(key_of), summaries, load, fresh, aliases=all_aliases)
    stats = ScanStats(notes=len(notes), cached=len(hit_keys), parsed=len(misses),
                      bytes_parsed=bytes_parsed, seconds=time.perf_counter() - t0, jobs=n_jobs)
    return store, stats


def scan(vault: Vault, subset: Sequence[NoteFile] | None = None, *, jobs: int | None = None,
         use_cache: bool = True) -> tuple[list[ParsedNote], ScanStats]:
    """Parsed notes for `subset` (default: every note), in vault path order."""
    store, stats = open_store(vault, subset, jobs=jobs, use_cache=use_cache)
    return store.all(), stats


def _jobs(requested: int | None, total_bytes: int) -> int:
    if requested is not None:
        return max(1, requested)
    if total_bytes < _PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(os.cpu_count() or 1, 8))


def parse_many(items: Sequence[tuple[str, bytes]], max_bytes: int, jobs: int = 1
               ) -> list[ParsedNote]:
    if not items:  # a warm run must not even import the parser (tree-sitter)
        return []
    if jobs <= 1 or len(items) < 2 * jobs:
        return _parse_batch(items, max_bytes)
    from concurrent.futures import ProcessPoolExecutor  # only cold scans pay this import

    # Interleave so each worker gets a similar mix of large and small notes.
    batches = [list(items[i::jobs * 4]) for i in range(jobs * 4)]
    out: list[ParsedNote] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for rows in pool.map(_parse_rows, batches, [max_bytes] * len(batches)):
            out.extend(ParsedNote.from_json(r) for r in rows)
    return out


def _parse_batch(items: Sequence[tuple[str, bytes]], max_bytes: int) -> list[ParsedNote]:
    from .parser import parse_note

    return [parse_note(path, data, max_bytes=max_bytes) for path, data in items]


def _parse_rows(items: Sequence[tuple[str, bytes]], max_bytes: int) -> list[list[Any]]:
    return [p.to_json() for p in _parse_batch(items, max_bytes)]
