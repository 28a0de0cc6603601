"""Turn a vault's notes into ParsedNote records: cache hits first, then parse the rest.

Cold parsing is CPU bound (tree-sitter), so large batches of misses are spread over
worker processes (both cores of a CI runner); a warm run is one SQLite scan.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from .cache import ParseCache, cache_key
from .model import ParsedNote
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


def scan(vault: Vault, subset: Sequence[NoteFile] | None = None, *, jobs: int | None = None,
         use_cache: bool = True) -> tuple[list[ParsedNote], ScanStats]:
    """Parsed notes for `subset` (default: every note), in vault path order."""
    t0 = time.perf_counter()
    notes = list(vault.notes if subset is None else subset)
    salt = str(vault.config.vault.max_note_bytes)
    keys = [cache_key(n.sha, n.path, salt) for n in notes]
    cache = ParseCache(vault.git_dir / "kbase" if use_cache and vault.git_dir else None)
    try:
        hits = cache.get_many(keys)
        misses = [n for n, k in zip(notes, keys, strict=True) if k not in hits]
        contents = vault.read(misses)
        n_jobs = _jobs(jobs, sum(len(b) for b in contents.values()))
        fresh = parse_many([(n.path, contents[n.path]) for n in misses],
                           vault.config.vault.max_note_bytes, n_jobs)
        fresh_by_path = {p.path: p for p in fresh}
        new_rows = [(k, fresh_by_path[n.path]) for n, k in zip(notes, keys, strict=True)
                    if k not in hits]
        if new_rows:
            live = keys if subset is None else ()
            cache.put_many(new_rows, live)
    finally:
        cache.close()
    result = [hits[k] if k in hits else fresh_by_path[n.path]
              for n, k in zip(notes, keys, strict=True)]
    stats = ScanStats(
        notes=len(notes), cached=len(hits), parsed=len(misses),
        bytes_parsed=sum(len(b) for b in contents.values()),
        seconds=time.perf_counter() - t0, jobs=n_jobs,
    )
    return result, stats


def _jobs(requested: int | None, total_bytes: int) -> int:
    if requested is not None:
        return max(1, requested)
    if total_bytes < _PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(os.cpu_count() or 1, 8))


def parse_many(items: Sequence[tuple[str, bytes]], max_bytes: int, jobs: int = 1
               ) -> list[ParsedNote]:
    if jobs <= 1 or len(items) < 2 * jobs:
        return _parse_batch(items, max_bytes)
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
