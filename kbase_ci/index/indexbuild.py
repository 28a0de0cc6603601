"""`kbase index`: plan shards, reuse the unchanged ones, build the rest, assemble, swap.

The build happens in a temp folder beside the target and replaces it only when
complete (see `swap`). Shards whose inputs digest matches the previous index at the
target are copied from it, after checking their bytes against its manifest; the others
are built (in worker processes when there is enough work for more than one core).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kbase_ci.collector import bulk_allocations
from kbase_ci.errors import IndexFormatError
from kbase_ci.index import swap
from kbase_ci.index.assemble import assemble, embeddings, header, write_manifest
from kbase_ci.index.blocks import Shard, Slice, SliceCounts
from kbase_ci.index.integrity import manifest_digest, remember, size_cap
from kbase_ci.index.layout import PARSED_FILE
from kbase_ci.index.manifest import (
    Header,
    IndexManifest,
    Manifest,
    SliceManifest,
    dump_table,
    header_fields,
    read_manifest,
    sha256,
)
from kbase_ci.index.modelchoice import ModelChoice, choose_model
from kbase_ci.index.modelfolder import encoder_key
from kbase_ci.index.previous import PreviousIndex
from kbase_ci.index.provenance import source_of
from kbase_ci.index.shardbuild import embedder_for, inputs_digest, vectors_digest
from kbase_ci.index.shards import DomainRule, ShardSpec, plan_shards, slice_shards
from kbase_ci.index.sizes import note_sizes
from kbase_ci.index.workers import Task, parse_notes, run_tasks
from kbase_ci.parsed import ParsedNote
from kbase_ci.state.bounded import read_input
from kbase_ci.state.files import replace
from kbase_ci.vault.config import Config
from kbase_ci.vault.notefiles import Vault

if TYPE_CHECKING:
    from kbase_ci.index.scopes import ScopeInputs

Progress = Callable[[str, int, int], None]
"""Called with (stage, done, total) as a build advances."""

_EFFECT = {"KB001": "indexed as decoded", "KB002": "not indexed",
           "KB003": "indexed as plain text"}


@dataclass(frozen=True)
class BuildResult:
    out_dir: Path
    manifest: Manifest
    shards_built: tuple[str, ...]
    shards_reused: tuple[str, ...]
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall seconds of the parent's stages (links, similar, total) plus seconds summed
    over shard tasks, which may run in parallel (parse, chunk, bm25, embeddings, vectors)."""
    warnings: tuple[str, ...] = ()
    previous: str | None = None
    """Why the previous index at the target could not be reused (None: reused or absent)."""
    similar_rows: int = 0
    """Similar-note lists computed in full; the others were updated incrementally."""
    embedded: int = 0
    """Chunks embedded by this build; rebuilt shards copy the vectors of unchanged notes."""
    embed_seconds: float = 0.0
    """Wall seconds the embedding took: the model calls' seconds, at most the wall time
    of the shard builds (workers embed side by side; that time also holds their parsing,
    so the rate it gives is a lower bound)."""
    texts_embedded: int = 0
    """Distinct texts the model embedded for those chunks: each once, whichever shards
    hold it (kbase_ci.index.embedplan)."""

    @property
    def chunks_per_second(self) -> float | None:
        """Embedding throughput (None: nothing embedded)."""
        if not self.embedded or self.embed_seconds <= 0:
            return None
        return self.embedded / self.embed_seconds

    @property
    def embeddings_reason(self) -> str | None:
        return self.manifest.embeddings.reason


def parse_warnings(notes: Sequence[ParsedNote]) -> list[str]:
    """Notes the parser could not fully read: indexed as text (or, if binary, not at all),
    and the build says so; `kbase check` reports the same problems as findings."""
    out = []
    for n in notes:
        for d in n.diagnostics:
            if d.code.startswith(("KB0", "KB30")):
                what = _EFFECT.get(d.code, "frontmatter not indexed")
                out.append(f"{n.path}:{d.line}:{d.col}: {d.code} {d.message} ({what})")
    return out


def build_index(vault: Vault, out_dir: Path, *, model: Path | None = None,
                shard: tuple[int, int] | None = None, jobs: int | None = None,
                progress: Progress | None = None, use_cache: bool = True,
                scope: ScopeInputs | None = None) -> BuildResult:
    """Build the index of `vault` into `out_dir`, or with `shard=(k, n)` slice k of n of
    it (combine slices with `merge.merge_slices`). `scope`: a scoped index
    (kbase_ci/scope): `vault` holds only the scope's notes, and the model, source, other
    notes and manifest block come from the main index."""

    with bulk_allocations():
        return _build(vault, out_dir, model=model, shard=shard, jobs=jobs, progress=progress,
                      use_cache=use_cache, scope=scope)


def _build(vault: Vault, out_dir: Path, *, model: Path | None,
           shard: tuple[int, int] | None, jobs: int | None, progress: Progress | None,
           use_cache: bool, scope: ScopeInputs | None) -> BuildResult:
    t_start = time.perf_counter()
    report = progress or (lambda stage, done, total: None)
    report("prepare", 0, 4)  # model, previous index, note sizes, plan; then each shard
    cfg = vault.config
    rule = DomainRule.parse(cfg.index.domain)
    choice = scope.model if scope is not None else choose_model(
        vault.root, cfg.embeddings.model, model, progress)
    # Not `resolve()`: a committed `.kbase -> ..` must be refused, not followed.
    out_dir = Path(os.path.abspath(out_dir))
    swap.check_target(out_dir, vault.repo_root)
    swap.recover(out_dir)
    previous, why = _previous(out_dir)
    dim = _dim_of(choice, cfg, previous)
    report("prepare", 1, 4)
    model_key = f"{choice.sha256}/{dim}{encoder_key(choice.kind)}" if choice.sha256 else None
    vectors_key = vectors_digest(model_key, cfg.vault.max_note_bytes) if dim else None
    built = scope.source if scope is not None else source_of(vault)
    head = header(built.source, built.built_at, cfg.digest, cfg.index.domain,
                  embeddings(choice.id, dim, choice.reason, choice.sha256, choice.kind),
                  cfg.index.stemmer, vectors_key,
                  scope.manifest if scope is not None else None)
    seconds: dict[str, float] = {"parse": 0.0}

    parsed: dict[str, ParsedNote] = {}
    if rule.needs_frontmatter:  # domains come from frontmatter: parse everything first
        t0 = time.perf_counter()
        parsed = {n.path: n for n in parse_notes(vault, [nf.path for nf in vault.notes],
                                                   use_cache)}
        seconds["parse"] = time.perf_counter() - t0
    prev_index = PreviousIndex(out_dir, previous) if previous is not None else None
    sizes = note_sizes(vault, prev_index.blob_sizes() if prev_index is not None else None)
    report("prepare", 2, 4)
    plan = plan_shards([(nf.path, sizes[nf.path], rule.domain(
        nf.path, parsed[nf.path].frontmatter if parsed else None)) for nf in vault.notes],
        rule, cfg.index.shard_max_bytes)
    selected = plan if shard is None else slice_shards(plan, *shard)
    report("prepare", 3, 3 + len(selected))

    tmp = swap.temp_dir_for(out_dir)
    try:
        blobs = {nf.path: nf.sha for nf in vault.notes}
        metas: dict[str, Shard] = {}
        tasks: list[Task] = []
        digests: dict[str, str] = {}
        reused: list[ShardSpec] = []
        for done, spec in enumerate(selected):
            report("prepare", 3 + done, 3 + len(selected))  # copying unchanged shards
            digest = digests[spec.id] = inputs_digest(
                spec.id, [(p, blobs[p]) for p in spec.notes], model_key,
                cfg.vault.max_note_bytes, cfg.index.stemmer)
            old = previous.shards.get(spec.id) if previous is not None else None
            if (previous is not None and old is not None and old.inputs == digest
                    and _copy_shard(out_dir, tmp, spec.id, previous)):
                metas[spec.id] = old
                reused.append(spec)
            else:
                known = tuple(parsed[p] for p in spec.notes) if parsed else None
                kept = prev_index.vector_rows(spec.notes, blobs, vectors_key) \
                    if prev_index is not None else {}
                tasks.append(Task(spec, known, choice.path, tmp / "shards" / spec.id,
                                  use_cache, cfg.embeddings.dim, cfg.index.stemmer, kept, dim))
        report("prepare", 3 + len(selected), 3 + len(selected))

        t_tasks = time.perf_counter()
        ran = run_tasks(vault, tasks, jobs, report,
                        [p for s in reused for p in s.notes if p not in parsed], use_cache)
        t_tasks = time.perf_counter() - t_tasks
        results = ran.results
        parsed.update(ran.parsed)
        if ran.texts:
            seconds["embeddings"] = ran.embed_seconds
        for task in tasks:
            r = results[task.spec.id]
            metas[r.id] = Shard(task.spec.domain, len(task.spec.notes), r.chunks,
                                r.vectors, digests[r.id])
            for stage, secs in r.seconds.items():
                seconds[stage] = seconds.get(stage, 0.0) + secs
        chosen = [parsed[p] for s in selected for p in s.notes]
        warnings = parse_warnings(chosen)
        similar_rows = 0
        manifest: Manifest
        if shard is None:
            manifest, more, similar_rows = assemble(
                tmp, vault, chosen, plan, metas, head, warnings, cfg.index.similar,
                prev_index,
                {p for t in tasks for p in t.spec.notes},
                scope.outside if scope is not None else (), progress=report)
            seconds.update(more)
        else:
            manifest = _write_slice(tmp, head, plan, metas, chosen, warnings, shard)
        _carry_scopes(out_dir, tmp)
        swap.swap_into(tmp, out_dir, vault.repo_root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if shard is None:  # built here: no query needs to validate it again
        remember(vault.git_dir, manifest_digest(out_dir))
    seconds["total"] = time.perf_counter() - t_start
    return BuildResult(out_dir, manifest, tuple(t.spec.id for t in tasks),
                       tuple(s.id for s in reused), seconds, tuple(warnings), why,
                       similar_rows, sum(results[t.spec.id].embedded for t in tasks),
                       min(t_tasks, seconds.get("embeddings", 0.0)), ran.texts)


def _dim_of(choice: ModelChoice, cfg: Config, previous: IndexManifest | None
            ) -> int | None:
    """The vectors' dimension: the previous index's when it used the same model file and
    settings, else the model's (loading it costs ~0.2 s, and an incremental build's
    worker loads it anyway for the shards it rebuilds)."""
    if choice.path is None:
        return None
    if previous is not None and previous.config_digest == cfg.digest and \
            choice.sha256 and previous.embeddings.sha256 == choice.sha256 and \
            previous.embeddings.dim is not None:
        return previous.embeddings.dim
    return embedder_for(choice.path, cfg.embeddings.dim).dim


def _carry_scopes(out_dir: Path, tmp: Path) -> None:
    """Scoped indexes live in `scopes/` inside the main index folder (each verified by its
    own manifest, not listed in the main one); a rebuild keeps them (they become stale)."""
    old = out_dir / "scopes"
    if old.is_dir() and not (tmp / "scopes").exists():
        replace(old, tmp / "scopes")


def _previous(out_dir: Path) -> tuple[IndexManifest | None, str | None]:
    if not (out_dir / "manifest.json").exists():
        return None, None
    try:
        data = read_manifest(out_dir)
    except IndexFormatError as exc:
        return None, f"previous index not reused: {exc}"
    if not isinstance(data, IndexManifest):  # a slice
        return None, None
    return data, None


def _copy_shard(old_root: Path, new_root: Path, sid: str, previous: IndexManifest) -> bool:
    """Copy a shard's files from the previous index, checking each against its manifest;
    False (and nothing copied) if any file is missing or was modified."""
    prefix = f"shards/{sid}/"
    files = {rel: h for rel, h in previous.files.items() if rel.startswith(prefix)}
    if not files:
        return False
    blobs: dict[str, bytes] = {}
    for rel, digest in files.items():
        try:
            data = read_input(old_root / rel, size_cap(rel), follow_links=False)
        except OSError:  # InputRefused included: a link, a FIFO, above its cap
            return False
        if sha256(data) != digest:
            return False
        blobs[rel] = data
    for rel, data in blobs.items():
        dest = new_root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    return True


def _write_slice(tmp: Path, head: Header, plan: Sequence[ShardSpec],
                 metas: dict[str, Shard], notes: Sequence[ParsedNote],
                 warnings: Sequence[str], shard: tuple[int, int]) -> SliceManifest:
    """A slice: its shard folders, its notes as parsed, and a manifest that says which
    slice of which plan it is. It is not an index; `merge_slices` makes one."""
    (tmp / PARSED_FILE).write_bytes(dump_table(
        [n.to_json() for n in sorted(notes, key=lambda n: n.path)]))
    return write_manifest(tmp, SliceManifest(
        **header_fields(head), warnings=tuple(warnings),
        counts=SliceCounts(notes=len(notes), shards=len(metas)),
        shards={sid: metas[sid] for sid in sorted(metas)},
        slice=Slice(shard[0], shard[1], plan_digest(plan)), files={}))


def plan_digest(plan: Sequence[ShardSpec]) -> str:
    return sha256(dump_table([[s.id, s.domain, list(s.notes)] for s in plan]))
