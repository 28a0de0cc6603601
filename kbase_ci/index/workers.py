"""Run shard builds in this process, or in forked worker processes (one per core).

Each task parses its own notes (parse cache first) and then chunks its shard and writes
its BM25 files, so parsing and indexing overlap instead of waiting for the whole vault to
be parsed: cold parsing is as expensive as indexing. The texts the shards need vectors
for come back to the parent, which hands each distinct text to the model once, in pieces
spread over the same workers (kbase_ci.index.embedplan), and has a shard's vector files
written once all its rows are there. Workers are forked so that they inherit the vault
listing and the loaded embedding model; the parsed notes come back to the parent, which
needs them for the vault-wide tables.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kbase_ci.index import tokens
from kbase_ci.index.embedplan import EmbedPlan
from kbase_ci.index.modelfolder import TRANSFORMER, model_kind
from kbase_ci.index.shardbuild import (
    Chunked,
    ShardJob,
    ShardResult,
    chunk_shard,
    embed,
    finish_shard,
    null_rows,
)
from kbase_ci.index.shards import ShardSpec
from kbase_ci.parsed import ParsedNote
from kbase_ci.state.threads import blas_single_threaded, one_blas_thread
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.scanner import scan

# Below this much Markdown to index, worker start-up costs more than it saves.
OVERLAP_MIN_NOTES = 2000
"""Notes of reused shards past which their decoding overlaps the shard builds."""
PARALLEL_MIN_BYTES = 2_000_000
TRANSFORMER_PARALLEL_MIN_BYTES = 50_000
"""A transformer embeds ~70-90 chunks a second per core, so 50 KB of notes (~250 chunks)
already cost more than forking workers (~0.3 s). onnxruntime's own threads do not
replace them: on one short text per call, 2 intra-op threads took 2x the CPU of one for
less throughput (300 real chunks, load average 8-11)."""
_vault: Vault | None = None  # set before forking; read by tasks in the workers
_steps: Any = None
"""A shared counter (multiprocessing.Value, set before forking) of note steps done: a
note is parsed, chunked, BM25-indexed and embedded, so a shard of 1,000 notes reports
four times instead of once, and the parent shows progress within shards."""
_echo: Callable[[], None] | None = None
"""Shards built in this process (no workers): show each step as it is counted."""


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
    vector_dim: int | None = None
    """`ShardJob.vector_dim`."""


def _parallel_min_bytes(tasks: Sequence[Task]) -> int:
    models = {t.model for t in tasks if t.model is not None}
    if any(model_kind(m) == TRANSFORMER for m in models):
        return TRANSFORMER_PARALLEL_MIN_BYTES
    return PARALLEL_MIN_BYTES


def parse_notes(vault: Vault, paths: Sequence[str], use_cache: bool,
                progress: Callable[[int], None] | None = None) -> list[ParsedNote]:
    files = [nf for p in paths if (nf := vault.note(p)) is not None]
    if not files:
        return []
    got, _ = scan(vault, files, jobs=1, use_cache=use_cache, progress=progress)
    return got


def _step(n: int) -> None:
    counter = _steps
    if counter is not None:
        with counter.get_lock():
            counter.value += n
    if _echo is not None:
        _echo()


def steps_per_note(task: Task) -> int:
    """Parse, chunk, BM25, and with a model embed: `_step` calls per note of a task."""
    return 4 if task.model is not None else 3


def _chunk(task: Task) -> tuple[Chunked, tuple[ParsedNote, ...]]:
    """Parse (unless parsed) and chunk one task's shard, with its BM25 files."""
    vault = _vault
    assert vault is not None  # set by run_tasks before any task runs
    t0 = time.perf_counter()
    notes = task.parsed
    if notes is None:  # parsed here: counted as it goes (cache hits at once after)
        told = [0]

        def parsed(n: int) -> None:
            told[0] += n
            _step(n)

        notes = tuple(parse_notes(vault, task.spec.notes, task.use_cache, parsed))
        _step(len(task.spec.notes) - told[0])
    parse_s = time.perf_counter() - t0
    contents = vault.read([nf for p in task.spec.notes if (nf := vault.note(p)) is not None])
    got = chunk_shard(ShardJob(task.spec.id, notes, contents, task.model, task.out,
                               task.dim, task.stemmer, task.vectors, task.vector_dim), _step)
    return replace(got, seconds={"parse": parse_s, **got.seconds}), notes


def _embed(model: Path, dim: int | None, texts: list[str]) -> tuple[list[str], Any, float]:
    t0 = time.perf_counter()
    rows = embed(model, dim, texts)
    return texts, rows, time.perf_counter() - t0


@dataclass(frozen=True, slots=True)
class Outcome:
    """What `run_tasks` built."""

    results: dict[str, ShardResult]
    parsed: dict[str, ParsedNote]
    """The notes of the tasks and of `also_parse`."""
    texts: int = 0
    """Distinct texts the model embedded (each once, whichever shards hold it)."""
    embed_seconds: float = 0.0
    """Seconds of the model's calls, summed over the processes that made them."""


class _Inline(Executor):
    """Runs each call at once, in this process (one worker: no pool)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            fut.set_exception(exc)
        return fut


def run_tasks(vault: Vault, tasks: Sequence[Task], jobs: int | None,
              report: Callable[[str, int, int], None], also_parse: Sequence[str],
              use_cache: bool) -> Outcome:
    """Build every task's shard: chunk each (parsing its notes unless given), embed the
    distinct texts of them all, then write each shard's vectors as soon as its rows are
    there. Returns the results and the parsed notes of the tasks and of `also_parse` (the
    notes of reused shards, parsed here meanwhile)."""
    global _vault, _steps, _echo
    _vault = vault
    order = sorted(tasks, key=lambda t: (-t.spec.bytes, t.spec.id))  # largest first
    workers = max(1, min(jobs if jobs is not None else (os.cpu_count() or 1), len(order)))
    if jobs is None and sum(t.spec.bytes for t in order) < _parallel_min_bytes(order):
        workers = 1
    # An incremental build rebuilds a shard or two and decodes every other note from the
    # parse cache (~0.5 s at 10k notes): a worker builds the shards meanwhile.
    overlap = bool(order) and len(also_parse) >= OVERLAP_MIN_NOTES and jobs != 1 and \
        (os.cpu_count() or 1) > 1
    ctx = multiprocessing.get_context("fork")
    _steps = ctx.Value("q", 0)
    total = sum(len(t.spec.notes) * steps_per_note(t) for t in order)
    notes = sum(len(t.spec.notes) for t in order)

    def show() -> None:  # steps as notes: "build 12000/38404"
        report("build", _steps.value * notes // total if total else 0, notes)

    _step(sum(len(t.spec.notes) for t in order if t.parsed is not None))  # parsed before
    show()
    try:
        if workers == 1 and not overlap:
            # One scan for everything: each scan call reads the whole parse cache.
            t0 = time.perf_counter()
            todo = [p for t in order if t.parsed is None for p in t.spec.notes]
            told = [0]

            def scanned(n: int) -> None:  # a miss among also_parse is not a step: clamp
                n = min(n, len(todo) - told[0])
                told[0] += n
                _step(n)

            _echo = show
            parsed = {n.path: n for n in parse_notes(vault, [*todo, *also_parse], use_cache,
                                                     scanned)}
            _step(len(todo) - told[0])
            share = (time.perf_counter() - t0) / max(1, len(order))
            order = [replace(t, parsed=tuple(parsed[p] for p in t.spec.notes))
                     if t.parsed is None else t for t in order]
            with blas_single_threaded():
                out = _drive(_Inline(), order, show, lambda: None)
            return replace(out, parsed={**parsed, **out.parsed}, results={
                sid: replace(r, seconds={**r.seconds, "parse": share})
                for sid, r in out.results.items()})
        with ProcessPoolExecutor(max_workers=workers, initializer=one_blas_thread,
                                 mp_context=ctx) as pool:
            here: dict[str, ParsedNote] = {}
            spent = [0.0]

            def meanwhile() -> None:  # once, after the first tasks went to the workers
                t0 = time.perf_counter()
                here.update((n.path, n) for n in parse_notes(vault, also_parse, use_cache))
                spent[0] = time.perf_counter() - t0

            out = _drive(pool, order, show, meanwhile)
        if order:
            first = order[0].spec.id
            out.results[first] = replace(out.results[first], seconds={
                **out.results[first].seconds,
                "parse": out.results[first].seconds["parse"] + spent[0]})
        return replace(out, parsed={**here, **out.parsed})
    finally:
        _vault = None
        _steps = None
        _echo = None


def _drive(pool: Executor, order: Sequence[Task], show: Callable[[], None],
           meanwhile: Callable[[], None]) -> Outcome:
    """Chunk every task, embed the new distinct texts in pieces as shards come back, and
    write each shard's vectors once its rows are there (`pool`: worker processes, or
    `_Inline`)."""
    plan = EmbedPlan()
    results: dict[str, ShardResult] = {}
    parsed: dict[str, ParsedNote] = {}
    waiting: dict[str, Chunked] = {}
    pending: dict[Future[Any], str] = {pool.submit(_chunk, t): "chunk" for t in order}
    model = next(((t.model, t.dim) for t in order if t.model is not None), None)
    nulls: list[Any] = []
    if model is not None:  # the null questions: once per build, beside the shards
        pending[pool.submit(null_rows, *model)] = "nulls"
    meanwhile()
    seconds = 0.0

    def finish(sid: str) -> None:
        shard = waiting.pop(sid)
        pending[pool.submit(finish_shard, replace(shard, texts=()), plan.rows(shard),
                            nulls[0] if nulls else None)] = "finish"

    while pending:  # wake up often: the shared counter moves within shards
        done, _ = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
        for fut in [f for f in pending if f in done]:  # in the order they were asked for
            kind = pending.pop(fut)
            if kind == "chunk":
                shard, got = fut.result()
                parsed.update((n.path, n) for n in got)
                waiting[shard.id] = shard
                pieces, ready = plan.add(shard) if shard.needs_model else ([], True)
                for piece in pieces:
                    assert shard.model is not None
                    pending[pool.submit(_embed, shard.model, shard.dim, piece)] = "embed"
                if not shard.needs_model:
                    _step(shard.notes * (shard.model is not None))  # nothing to embed
                if ready and (nulls or not shard.needs_model):
                    finish(shard.id)
            elif kind == "embed":
                texts, rows, secs = fut.result()
                seconds += secs
                for sid in plan.took(texts, rows):
                    if nulls:
                        finish(sid)
            elif kind == "nulls":
                nulls.append(fut.result())
                for sid in [s for s, c in waiting.items() if plan.ready(c)]:
                    finish(sid)
            else:
                r = fut.result()
                results[r.id] = r
            _step(plan.progress())
        show()
    return Outcome(results, parsed, plan.embedded, seconds)
