"""Turn a vault's notes into ParsedNote records: cache hits first, then parse the rest.

`open_store` is the fast path: it parses only cache misses and returns a NoteStore
that decodes cached records on demand. Cold parsing is CPU bound (tree-sitter), so
large batches of misses are spread over worker processes (both cores of a runner;
kbase_ci.vault.parsejobs).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kbase_ci.parsed import ParsedNote
from kbase_ci.vault.cache import ParseCache, cache_key, key_path
from kbase_ci.vault.notefiles import NoteFile, Vault
from kbase_ci.vault.notestore import LazySummaries, NoteStore, NoteSummary, summarize
from kbase_ci.vault.parsejobs import (
    parse_and_store,
    parse_jobs,
    parse_many,
    parse_stored,
    remember_yaml,
    yaml_memo,
)

if TYPE_CHECKING:
    from kbase_ci.vault.indexhints import HintedNotes

# Below this many misses, parsing them costs less than reading a published index.
_HINTS_MIN = 50


@dataclass(frozen=True, slots=True)
class ScanStats:
    """How a scan got its notes: from the cache or parsed now."""

    notes: int
    cached: int
    parsed: int
    bytes_parsed: int
    seconds: float
    jobs: int
    indexed: int = 0
    """Notes summarized from a published index, left unparsed until needed."""


def open_store(vault: Vault, subset: Sequence[NoteFile] | None = None, *,
               jobs: int | None = None, use_cache: bool = True,
               progress: Callable[[int], None] | None = None, hints: bool = False
               ) -> tuple[NoteStore, ScanStats]:
    """Every note (or `subset`) as a NoteStore; only cache misses are parsed now.
    `progress(n)`: n more notes parsed (in this process; an index build reports it).
    `hints` (a hook, which decodes few records): a miss whose path and blob id a
    published index holds is summarized from it and parsed only when its record is
    loaded (kbase_ci.vault.indexhints)."""
    t0 = time.perf_counter()
    notes = list(vault.notes if subset is None else subset)
    salt = str(vault.config.vault.max_note_bytes)
    max_bytes = vault.config.vault.max_note_bytes
    key_of = {n.path: cache_key(n.sha, n.path, salt) for n in notes}
    cache = ParseCache(vault.git_dir / "kbase" if use_cache and vault.git_dir else None)
    hit_keys = cache.hits(list(key_of.values()))
    misses = [n for n in notes if key_of[n.path] not in hit_keys]
    contents = vault.read(misses)
    hinted = _hinted(vault, misses, contents) if hints and use_cache else None
    if hinted is not None:
        misses = [n for n in misses if n.path not in hinted.summaries]
    bytes_parsed = sum(len(contents[n.path]) for n in misses)
    n_jobs = parse_jobs(jobs, bytes_parsed)
    items = [(n.path, contents[n.path]) for n in misses]
    live = list(key_of.values()) if subset is None else []
    if n_jobs > 1 and cache.path is not None and len(items) >= 2 * n_jobs:
        # Workers store their own rows: summarizing and encoding 10k records is then
        # spread over the cores instead of running after the parse, on one.
        fresh, fresh_summaries = parse_stored(items, [key_of[p] for p, _ in items],
                                               max_bytes, n_jobs, cache.path.parent)
        cache.put_many([], live)  # the prune check only
    else:
        # Only when something is parsed: the memo's module comes with the parser's.
        memo = yaml_memo(cache) if items else None
        fresh = {p.path: p for p in parse_many(items, max_bytes, n_jobs, memo, progress)}
        fresh_summaries = {p: summarize(n) for p, n in fresh.items()}
        if fresh:
            cache.put_many([(key_of[p], note) for p, note in fresh.items()], live,
                           {key_of[p]: s for p, s in fresh_summaries.items()})
        if memo is not None:
            remember_yaml(cache, memo)
    hit_paths = [p for p, k in key_of.items() if k in hit_keys]
    path_for = key_path
    # Summaries held in memory: the notes parsed now, and those summarized from the index.
    known = {**(hinted.summaries if hinted is not None else {}), **fresh_summaries}

    def fetch_summaries(paths: Sequence[str] | None = None) -> dict[str, NoteSummary]:
        rows = cache.summaries(hit_keys if paths is None else [key_of[p] for p in paths])
        return {path_for(k): s for k, s in rows.items()}

    def all_aliases() -> dict[str, tuple[str, ...]]:
        got = {path_for(k): a for k, a in cache.aliases(hit_keys).items()}
        got.update({p: s.aliases for p, s in known.items() if s.aliases})
        return got

    def tag_variants(wanted: set[str]) -> dict[str, Counter[str]]:
        # Only tags stored in more than one spelling (by any row, or a note parsed now)
        # can be spelled several ways by the vault now; most tags are spelled one way,
        # and counting a common one walks thousands of rows.
        seen = cache.tag_spelling_sets(wanted)
        for s in known.values():
            for name in s.tags:
                if (low := name.lower()) in wanted:
                    seen.setdefault(low, set()).add(name)
        varied = {t for t, names in seen.items() if len(names) > 1}
        if not varied:
            return {}
        out: dict[str, Counter[str]] = {}
        # One row per note using the tag (a common tag: thousands), so count spellings
        # in a plain dict first; `setdefault(tag, Counter())` built a Counter per row.
        pairs: dict[tuple[str, str], int] = {}
        for tag, spelling, _key in cache.tag_uses(varied, hit_keys):
            pairs[tag, spelling] = pairs.get((tag, spelling), 0) + 1
        for (tag, spelling), n in pairs.items():
            out.setdefault(tag, Counter())[spelling] += n
        for s in known.values():
            for name in s.tags:
                if (low := name.lower()) in varied:
                    out.setdefault(low, Counter())[name] += 1
        return {t: c for t, c in out.items() if len(c) > 1}

    def load(paths: Sequence[str]) -> dict[str, ParsedNote]:
        got = cache.get_many([key_of[p] for p in paths])
        out = {p: got[key_of[p]] for p in paths if key_of[p] in got}
        # Summarized from the index, or a row vanished or is damaged: parse it now.
        by_path = {n.path: n for n in notes}
        lost = [by_path[p] for p in paths if p not in out]
        if lost:
            data = vault.read(lost)
            size = sum(len(b) for b in data.values())
            again = parse_and_store(cache, [(n.path, data[n.path]) for n in lost], key_of,
                                    max_bytes, parse_jobs(jobs, size))
            out.update({n.path: n for n in again})
        return out

    summaries = LazySummaries(hit_paths, fetch_summaries, known, fetch_summaries)
    store = NoteStore(list(key_of), summaries, load, fresh, aliases=all_aliases,
                      tag_variants=tag_variants, hinted=hinted)
    stats = ScanStats(notes=len(notes), cached=len(hit_keys), parsed=len(misses),
                      bytes_parsed=bytes_parsed, seconds=time.perf_counter() - t0, jobs=n_jobs,
                      indexed=len(hinted.summaries) if hinted is not None else 0)
    return store, stats


def _hinted(vault: Vault, misses: Sequence[NoteFile], contents: Mapping[str, bytes]
            ) -> HintedNotes | None:
    """The misses a published index holds at the same blob id, summarized from it and
    checked against their text (kbase_ci.vault.indexhints)."""
    if len(misses) < _HINTS_MIN or vault.repo_root is None or vault.git_dir is None:
        return None
    from kbase_ci.vault.indexhints import index_hints  # only a cold hook reads it

    got = index_hints(vault.repo_root, vault.git_dir, vault.config.digest,
                      {n.path: (n.sha, contents[n.path]) for n in misses})
    return got if got is not None and got.summaries else None


def scan(vault: Vault, subset: Sequence[NoteFile] | None = None, *, jobs: int | None = None,
         use_cache: bool = True, progress: Callable[[int], None] | None = None
         ) -> tuple[list[ParsedNote], ScanStats]:
    """Parsed notes for `subset` (default: every note), in vault path order."""
    store, stats = open_store(vault, subset, jobs=jobs, use_cache=use_cache,
                              progress=progress)
    return store.all(), stats
