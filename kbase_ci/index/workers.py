"""Run shard builds in this process, or in forked worker processes (one per core).

Each task parses its own notes (parse cache first) and then builds its shard, so parsing
and indexing overlap instead of waiting for the whole vault to be parsed: cold parsing
is as expensive as indexing. Workers are forked so that they inherit the vault listing
and the loaded embedding model; the parsed notes come back to the parent, which needs
them for the vault-wide tables.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path

from kbase_ci.index import tokens
from kbase_ci.index.blas import blas_single_threaded, one_blas_thread
from kbase_ci.index.shardbuild import ShardJob, ShardResult, build_shard
from kbase_ci.index.shards import ShardSpec
from kbase_ci.model import ParsedNote
from kbase_ci.vault.files import Vault
from kbase_ci.vault.scanner import scan

# Below this much Markdown to index, worker start-up costs more than it saves.
OVERLAP_MIN_NOTES = 2000
"""Notes of reused shards past which their decoding overlaps the shard builds."""
PARALLEL_MIN_BYTES = 2_000_000
_vault: Vault | None = None  # set before forking; read by tasks in the workers


@dataclass(frozen=True, slots=True)
class Task:
    spec: ShardSpec
    parsed: tuple[ParsedNote, ...] | None
    """Already parsed notes of the shard (None: the task parses them)."""
    model: Path | None
    out: Path
    use_cache: bool
    dim: int | None = None
    stemmer: str = tokens.STEMMER
    """`index.stemmer`."""
    vectors: dict[str, bytes] = field(default_factory=dict)
    """`ShardJob.vectors`: the previous build's rows of unchanged notes."""


def parse_notes(vault: Vault, paths: Sequence[str], use_cache: bool) -> list[ParsedNote]:
    files = [nf for p in paths if (nf := vault.note(p)) is not None]
    if not files:
        return []
    got, _ = scan(vault, files, jobs=1, use_cache=use_cache)
    return got


def _run(task: Task) -> tuple[ShardResult, tuple[ParsedNote, ...]]:
    vault = _vault
    assert vault is not None  # set by run_tasks before any task runs
    t0 = time.perf_counter()
    notes = task.parsed
    if notes is None:
        notes = tuple(parse_notes(vault, task.spec.notes, task.use_cache))
    parse_s = time.perf_counter() - t0
    contents = vault.read([nf for p in task.spec.notes if (nf := vault.note(p)) is not None])
    result = build_shard(ShardJob(task.spec.id, notes, contents, task.model, task.out,
                                  task.dim, task.stemmer, task.vectors))
    return replace(result, seconds={"parse": parse_s, **result.seconds}), notes


def run_tasks(vault: Vault, tasks: Sequence[Task], jobs: int | None,
              report: Callable[[str, int, int], None], also_parse: Sequence[str],
              use_cache: bool) -> tuple[dict[str, ShardResult], dict[str, ParsedNote]]:
    """Build every task's shard; returns the results and the parsed notes of the tasks
    and of `also_parse` (the notes of reused shards, parsed here meanwhile)."""
    global _vault
    _vault = vault
    order = sorted(tasks, key=lambda t: (-t.spec.bytes, t.spec.id))  # largest first
    results: dict[str, ShardResult] = {}
    parsed: dict[str, ParsedNote] = {}
    workers = max(1, min(jobs if jobs is not None else (os.cpu_count() or 1), len(order)))
    if jobs is None and sum(t.spec.bytes for t in order) < PARALLEL_MIN_BYTES:
        workers = 1
    # An incremental build rebuilds a shard or two and decodes every other note from the
    # parse cache (~0.5 s at 10k notes): a worker builds the shards meanwhile.
    overlap = bool(order) and len(also_parse) >= OVERLAP_MIN_NOTES and jobs != 1 and \
        (os.cpu_count() or 1) > 1
    report("shards", 0, len(order))

    def collect(i: int, r: ShardResult, notes: tuple[ParsedNote, ...]) -> None:
        results[r.id] = r
        parsed.update((n.path, n) for n in notes)
        report("shards", i + 1, len(order))

    try:
        if workers == 1 and not overlap:
            # One scan for everything: each scan call reads the whole parse cache.
            t0 = time.perf_counter()
            todo = [p for t in order if t.parsed is None for p in t.spec.notes]
            parsed.update((n.path, n) for n in parse_notes(vault, [*also_parse, *todo],
                                                            use_cache))
            share = (time.perf_counter() - t0) / max(1, len(order))
            with blas_single_threaded():
                for i, task in enumerate(order):
                    if task.parsed is None:
                        task = replace(task, parsed=tuple(parsed[p] for p in task.spec.notes))
                    r, notes = _run(task)
                    collect(i, replace(r, seconds={**r.seconds, "parse": share}), notes)
            return results, parsed
        with ProcessPoolExecutor(max_workers=workers, initializer=one_blas_thread,
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_run, task) for task in order]
            t0 = time.perf_counter()
            parsed.update((n.path, n) for n in parse_notes(vault, also_parse, use_cache))
            here = time.perf_counter() - t0
            for i, fut in enumerate(as_completed(futures)):
                r, notes = fut.result()
                collect(i, r, notes)
        if order:
            first = order[0].spec.id
            results[first] = replace(results[first], seconds={
                **results[first].seconds, "parse": results[first].seconds["parse"] + here})
        return results, parsed
    finally:
        _vault = None
