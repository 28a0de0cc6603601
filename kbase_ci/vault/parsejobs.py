"""Parsing notes: in this process or spread over worker processes (cold parsing is CPU
bound), each frontmatter load remembered in the `yaml` memo beside the parse cache.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.parsed import ParsedNote
from kbase_ci.state.memos import StateStore, state_store
from kbase_ci.vault.cache import ParseCache
from kbase_ci.vault.notestore import NoteSummary, summarize

if TYPE_CHECKING:  # the parser's modules load only when something is parsed
    from kbase_ci.parse.frontmatter import YamlMemo

# Below this much unparsed text, starting worker processes costs more than it saves.
_PARALLEL_MIN_BYTES = 4_000_000


def parse_jobs(requested: int | None, total_bytes: int) -> int:
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
    remember_yaml(cache, memo)
    return notes


def _store_of(cache: ParseCache) -> StateStore:
    """The state store beside `cache` (its memos; one keeping nothing without a cache)."""
    return state_store(cache.path.parent if cache.path is not None else None)


def yaml_memo(cache: ParseCache) -> YamlMemo:
    """A YamlMemo answering from the `yaml` memo beside `cache` (`remember_yaml` keeps
    what it loaded)."""
    # Lazy here and below: a run answered from the parse cache never imports the parser
    # (tree-sitter and the grammar: ~10 ms of a hook run).
    from kbase_ci.parse.frontmatter import YamlMemo

    store = _store_of(cache)
    return YamlMemo(lambda digests: store.get_many("yaml", digests))


def remember_yaml(cache: ParseCache, memo: YamlMemo) -> None:
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


def parse_stored(items: Sequence[tuple[str, bytes]], keys: Sequence[str], max_bytes: int,
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
        remember_yaml(cache, memo)
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
