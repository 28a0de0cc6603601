"""Turn a vault's notes into ParsedNote records: cache hits first, then parse the rest.

`open_store` is the fast path: it parses only cache misses and returns a NoteStore
that decodes cached records on demand. Cold parsing is CPU bound (tree-sitter), so
large batches of misses are spread over worker processes (both cores of a runner).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.parsed import ParsedNote
from kbase_ci.state.memos import StateStore, state_store
from kbase_ci.vault.cache import ParseCache, cache_key, key_path
from kbase_ci.vault.files import Vault
from kbase_ci.vault.notefile import NoteFile
from kbase_ci.vault.notestore import LazySummaries, NoteStore, NoteSummary, summarize

if TYPE_CHECKING:  # the parser's modules load only when something is parsed
    from kbase_ci.parse.frontmatter import YamlMemo

# Below this much unparsed text, starting worker processes costs more than it saves.
_PARALLEL_MIN_BYTES = 4_000_000
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
    hinted = _hinted(vault, misses) if hints and use_cache else {}
    if hinted:
        misses = [n for n in misses if n.path not in hinted]
    contents = vault.read(misses)
    bytes_parsed = sum(len(b) for b in contents.values())
    n_jobs = _jobs(jobs, bytes_parsed)
    items = [(n.path, contents[n.path]) for n in misses]
    live = list(key_of.values()) if subset is None else []
    if n_jobs > 1 and cache.path is not None and len(items) >= 2 * n_jobs:
        # Workers store their own rows: summarizing and encoding 10k records is then
        # spread over the cores instead of running after the parse, on one.
        fresh, fresh_summaries = _parse_stored(items, [key_of[p] for p, _ in items],
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
            _remember_yaml(cache, memo)
    hit_paths = [p for p, k in key_of.items() if k in hit_keys]
    path_for = key_path
    # Summaries held in memory: the notes parsed now, and those summarized from the index.
    known = {**hinted, **fresh_summaries}

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
                                    max_bytes, _jobs(jobs, size))
            out.update({n.path: n for n in again})
        return out

    summaries = LazySummaries(hit_paths, fetch_summaries, known, fetch_summaries)
    store = NoteStore(list(key_of), summaries, load, fresh, aliases=all_aliases,
                      tag_variants=tag_variants)
    stats = ScanStats(notes=len(notes), cached=len(hit_keys), parsed=len(misses),
                      bytes_parsed=bytes_parsed, seconds=time.perf_counter() - t0, jobs=n_jobs,
                      indexed=len(hinted))
    return store, stats


def _hinted(vault: Vault, misses: Sequence[NoteFile]) -> dict[str, NoteSummary]:
    """Summaries from a published index of the misses it holds at the same blob id."""
    if len(misses) < _HINTS_MIN or vault.repo_root is None or vault.git_dir is None:
        return {}
    from kbase_ci.vault.indexhints import index_summaries  # only a cold hook reads it

    rows = index_summaries(vault.repo_root, vault.git_dir, vault.config.digest)
    if not rows:
        return {}
    out = {}
    for n in misses:
        got = rows.get(n.path)
        if got is not None and got[0] == n.sha:
            out[n.path] = got[1]
    return out


def scan(vault: Vault, subset: Sequence[NoteFile] | None = None, *, jobs: int | None = None,
         use_cache: bool = True, progress: Callable[[int], None] | None = None
         ) -> tuple[list[ParsedNote], ScanStats]:
    """Parsed notes for `subset` (default: every note), in vault path order."""
    store, stats = open_store(vault, subset, jobs=jobs, use_cache=use_cache,
                              progress=progress)
    return store.all(), stats


def _jobs(requested: int | None, total_bytes: int) -> int:
    if requested is not None:
        return max(1, requested)
    if total_bytes < _PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(os.cpu_count() or 1, 8))


def parse_and_store(cache: ParseCache, items: Sequence[tuple[str, bytes]],
                    keys: Mapping[str, str], max_bytes: int, jobs: int = 1
                    ) -> list[ParsedNote]:
    """Parse notes and store them in `cache` under `keys[path]`, with their frontmatter
    loads (a note missing from the cache, a HEAD version of a staged one)."""
    memo = yaml_memo(cache)
    notes = parse_many(items, max_bytes, jobs, memo)
    cache.put_many([(keys[n.path], n) for n in notes])
    _remember_yaml(cache, memo)
    return notes


def _store_of(cache: ParseCache) -> StateStore:
    """The state store beside `cache` (its memos; one keeping nothing without a cache)."""
    return state_store(cache.path.parent if cache.path is not None else None)


def yaml_memo(cache: ParseCache) -> YamlMemo:
    """A YamlMemo answering from the `yaml` memo beside `cache` (`_remember_yaml` keeps
    what it loaded)."""
    # Lazy here and below: a run answered from the parse cache never imports the parser
    # (tree-sitter and the grammar: ~10 ms of a hook run).
    from kbase_ci.parse.frontmatter import YamlMemo

    store = _store_of(cache)
    return YamlMemo(lambda digests: store.get_many("yaml", digests))


def _remember_yaml(cache: ParseCache, memo: YamlMemo) -> None:
    if memo.fresh:
        _store_of(cache).put_many("yaml", sorted(memo.fresh.items()))


def parse_many(items: Sequence[tuple[str, bytes]], max_bytes: int, jobs: int = 1,
               memo: YamlMemo | None = None,
               progress: Callable[[int], None] | None = None) -> list[ParsedNote]:
    """Parse `items` (path, bytes); `memo` is used when they are parsed in this process
    (a few notes: a hook), where skipping a YAML load saves importing ruamel."""
    if not items:  # a warm run must not even import the parser (tree-sitter)
        return []
    if jobs <= 1 or len(items) < 2 * jobs:
        return _parse_batch(items, max_bytes, memo, progress)
    from concurrent.futures import ProcessPoolExecutor  # only cold scans pay this import

    # Interleave so each worker gets a similar mix of large and small notes.
    batches = [list(items[i::jobs * 4]) for i in range(jobs * 4)]
    out: list[ParsedNote] = []
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for rows in pool.map(_parse_rows, batches, [max_bytes] * len(batches)):
            out.extend(ParsedNote.from_json(r) for r in rows)
    return out


def _parse_stored(items: Sequence[tuple[str, bytes]], keys: Sequence[str], max_bytes: int,
                  jobs: int, folder: Path) -> tuple[dict[str, ParsedNote],
                                                    dict[str, NoteSummary]]:
    """parse_many whose workers also write their notes to the parse cache in `folder`
    (SQLite serializes the writers); returns records and summaries by path."""
    from concurrent.futures import ProcessPoolExecutor

    order = list(zip(items, keys, strict=True))
    batches = [order[i::jobs * 4] for i in range(jobs * 4)]
    notes: dict[str, ParsedNote] = {}
    summaries: dict[str, NoteSummary] = {}
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for rows in pool.map(_parse_store_rows, batches, [max_bytes] * len(batches),
                             [str(folder)] * len(batches)):
            for row, (aliases, tags, targets, kind) in rows:
                note = ParsedNote.from_json(row)
                notes[note.path] = note
                summaries[note.path] = NoteSummary(tuple(aliases), tuple(tags),
                                                   tuple(targets), kind)
    # In the order of `items`, as parse_many gives them: the workers interleave.
    return ({p: notes[p] for p, _ in items if p in notes},
            {p: summaries[p] for p, _ in items if p in summaries})


_SummaryRow = tuple[list[str], list[str], list[str], str]


def _parse_store_rows(batch: Sequence[tuple[tuple[str, bytes], str]], max_bytes: int,
                      folder: str) -> list[tuple[list[Any], _SummaryRow]]:
    from kbase_ci.parse.frontmatter import YamlMemo  # lazy: see yaml_memo

    # Remember each frontmatter load, so a later hook on an edited note finds it.
    memo = YamlMemo()
    parsed = _parse_batch([item for item, _key in batch], max_bytes, memo)
    keyed = [(key, n, summarize(n)) for (_item, key), n in zip(batch, parsed, strict=True)]
    cache = ParseCache(Path(folder))
    try:
        cache.put_many([(key, n) for key, n, _s in keyed],
                       summaries={key: s for key, _n, s in keyed})
        _remember_yaml(cache, memo)
    finally:
        cache.close()
    return [(n.to_json(), (list(s.aliases), list(s.tags), list(s.targets), s.type))
            for _key, n, s in keyed]


def _parse_batch(items: Sequence[tuple[str, bytes]], max_bytes: int,
                 memo: YamlMemo | None = None,
                 progress: Callable[[int], None] | None = None) -> list[ParsedNote]:
    from kbase_ci.parse.parser import parse_note  # lazy: see yaml_memo

    if progress is None:
        return [parse_note(path, data, max_bytes=max_bytes, yaml_memo=memo)
                for path, data in items]
    out = []
    for i, (path, data) in enumerate(items, 1):
        out.append(parse_note(path, data, max_bytes=max_bytes, yaml_memo=memo))
        if i % _TICK == 0:
            progress(_TICK)
    progress(len(items) % _TICK)
    return out


_TICK = 100
"""Notes parsed between two progress reports."""


def _parse_rows(items: Sequence[tuple[str, bytes]], max_bytes: int) -> list[list[Any]]:
    return [p.to_json() for p in _parse_batch(items, max_bytes)]
