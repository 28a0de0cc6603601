"""The vault-wide files of an index: the notes table (with similar notes), the link
graph (both as the files `tables.write_notes`/`write_links` describe), and the manifest.

A full build and `--merge` of slices both end here with the same inputs (parsed notes,
the shard plan, built shard folders), which is what makes their bytes identical.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from kbase_ci import __version__
from kbase_ci.index import bm25, cosinebaseline, ranking, tokens, vectors
from kbase_ci.index.blocks import (
    Background,
    Bm25Settings,
    Counts,
    Embeddings,
    ModelKind,
    Scope,
    Shard,
    Source,
    Tokenizer,
    VectorSettings,
)
from kbase_ci.index.conceptsfile import write_concepts
from kbase_ci.index.hooklinks import write_hook_links
from kbase_ci.index.linkdelta import patched_links
from kbase_ci.index.manifest import (
    MANIFEST_NAME,
    Header,
    IndexManifest,
    Manifest,
    dump_table,
    header_fields,
    manifest_bytes,
    sha256,
    sha256_file,
)
from kbase_ci.index.modelfolder import STATIC, library
from kbase_ci.index.previous import PreviousIndex
from kbase_ci.index.shardbuild import read_chunk_notes
from kbase_ci.index.shards import ShardSpec
from kbase_ci.index.similar import note_vectors, similar_inputs, similar_notes
from kbase_ci.index.tables import links_table, notes_table, write_links, write_notes
from kbase_ci.index.unlinked import write_mentions
from kbase_ci.parsed import ParsedNote
from kbase_ci.state.folders import GIT_HIDE, TEMP_MARK
from kbase_ci.typedjson import decode
from kbase_ci.vault.indextables import FORMAT_VERSION
from kbase_ci.vault.linkrules import RULES_VERSION
from kbase_ci.vault.notefiles import Vault

M = TypeVar("M", bound=Manifest)


def embeddings(model: str | None, dim: int | None, reason: str | None,
               digest: str | None, kind: str = STATIC) -> Embeddings:
    """The manifest's `embeddings` block: without vectors (`dim` None) no kind or
    library; `kind` is how the model computes vectors (`modelfolder.STATIC` or
    `TRANSFORMER`)."""
    return Embeddings(model, cast(ModelKind, kind) if dim else None, dim, reason, digest,
                      library(kind) if dim else None)


def header(source: Source, built_at: str, config_digest: str, domain_rule: str,
           emb: Embeddings, stemmer: str = tokens.STEMMER,
           vectors_inputs: str | None = None, scope: Scope | None = None) -> Header:
    """Manifest fields an index shares with its slices: all but the files, counts,
    warnings and shards. `vectors_inputs`: `shardbuild.vectors_digest`. The settings
    blocks are the dicts the shard digests hash (`shardbuild`), typed on the way in."""
    return Header(
        format="kbase-index", format_version=FORMAT_VERSION, kbase_version=__version__,
        source=source, built_at=built_at, config_digest=config_digest, domain=domain_rule,
        tokenizer=decode(Tokenizer, tokens.settings(stemmer)),
        bm25=decode(Bm25Settings, bm25.settings()),
        vectors=decode(VectorSettings, {**vectors.settings(), "inputs": vectors_inputs})
        if emb.dim else None,
        embeddings=emb, fusion=ranking.settings(emb.kind) if emb.dim else None, scope=scope)


def link_inputs(notes: Sequence[ParsedNote], files: Sequence[str], aliases: bool,
                include_dot: bool = False) -> str:
    """Digest of everything that decides where a link points besides its own text: note
    paths and aliases, other files, the alias setting, the resolver's rules. While it is
    unchanged, only notes whose text changed can link elsewhere than before."""
    # `include_dot` joins the digest only when set, so indexes of the default keep their key.
    return sha256(dump_table([[n.path, list(n.aliases)] for n in notes]
                             + [sorted(files), aliases, RULES_VERSION]
                             + (["include_dot"] if include_dot else [])))


def file_hashes(root: Path) -> dict[str, str]:
    # The temp folder's marker and git-hiding file (kbase_ci.state.folders) go before the swap.
    return {p.relative_to(root).as_posix(): sha256_file(p)
            for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in (MANIFEST_NAME, TEMP_MARK, GIT_HIDE)}


def write_manifest(root: Path, manifest: M) -> M:
    """`manifest` with the hashes of the files under `root` as its `files`, written
    there."""
    # `_replace` keeps the class; mypy sees only M's bound through the attribute.
    manifest = cast(M, manifest._replace(files=file_hashes(root)))
    (root / MANIFEST_NAME).write_bytes(manifest_bytes(manifest))
    return manifest


def _row_reuse(previous: PreviousIndex, notes: Sequence[ParsedNote],
               blobs: dict[str, str]) -> Callable[[int, Any], bytes | None] | None:
    """For `write_notes`: the previous line of note i when the note is unchanged (same
    number, same blob) and its stored row is equal, so 10k rows are not encoded again.
    Only an unchanged blob makes equality safe: JSON has `1` and `true` where Python has
    1 == True.
    """
    got, core = previous.note_rows(), previous.core()
    if got is None or core is None:
        return None
    old, lines = got
    paths, old_blobs = core.paths, core.blobs or []

    def reuse(i: int, row: Any) -> bytes | None:  # `row` as stored
        if i >= len(old) or paths[i] != notes[i].path \
                or old_blobs[i] != blobs.get(notes[i].path) or old[i] != row:
            return None
        return lines[i] + b"\n"

    return reuse


def _background(root: Path, plan: Sequence[ShardSpec]) -> Background | None:
    """`cosinebaseline.combine` of the shards' null-query cosines (None without vectors)."""
    found = [root / "shards" / spec.id / cosinebaseline.FILE for spec in plan]
    if not any(p.is_file() for p in found):
        return None
    import numpy as np

    return cosinebaseline.combine([np.load(p, allow_pickle=False).tolist()
                               for p in found if p.is_file()])


def assemble(root: Path, vault: Vault, notes: Sequence[ParsedNote], plan: Sequence[ShardSpec],
             shards: dict[str, Shard], head: Header, warnings: Sequence[str],
             similar_k: int, previous: PreviousIndex | None = None,
             rebuilt: Collection[str] = (), outside: Sequence[ParsedNote] = (),
             progress: Callable[[str, int, int], None] | None = None
             ) -> tuple[IndexManifest, dict[str, float], int]:
    """Write notes.json, links.json and the manifest into `root`, where the shard folders
    of `plan` already are. With the `previous` index and the notes of the shards built
    this time (`rebuilt`), similar lists are updated rather than recomputed. `outside`:
    for a scoped index, the vault's other notes (`tables.links_table`). Returns the
    manifest, stage seconds, and how many similar lists were computed in full.
    `progress(stage, done, total)` hears of each step: `links`, `similar`, `notes`,
    `concepts`."""
    report = progress or (lambda stage, done, total: None)
    seconds: dict[str, float] = {}
    counts: dict[str, int] = {}
    t0 = time.perf_counter()
    notes = sorted(notes, key=lambda n: n.path)
    number = {n.path: i for i, n in enumerate(notes)}
    shard_of = {p: s.id for s in plan for p in s.notes}
    domain_of = {p: s.domain for s in plan for p in s.notes}
    blobs = {nf.path: nf.sha for nf in vault.notes}
    spans: dict[str, tuple[int, int]] = {}
    owners: list[list[int]] = []
    for spec in plan:
        chunk_notes = read_chunk_notes(root / "shards" / spec.id, sorted(spec.notes))
        owners.append([number[p] for p in chunk_notes])
        for i, p in enumerate(chunk_notes):
            first, count = spans.get(p, (i, 0))
            spans[p] = (first, count + 1)
    report("links", 0, 2)
    aliases, dot = vault.config.links.resolve_aliases, vault.config.vault.include_dot_folders
    link_key = link_inputs(notes, vault.files, aliases, dot)
    graph = (patched_links(previous, notes, vault.files, aliases, link_key, blobs,
                           include_dot=dot) if previous is not None and not outside else None)
    if graph is None:
        graph = links_table(notes, vault.files, resolve_aliases=aliases, include_dot=dot,
                            outside=outside)
    linked = graph.linked()
    statuses = graph.status_names()
    report("links", 1, 2)
    write_links(root, graph, statuses)
    seconds["links"] = time.perf_counter() - t0
    report("links", 2, 2)

    t0 = time.perf_counter()
    dim = head.embeddings.dim
    similar: list[list[list[float]]] = [[] for _ in notes]
    if dim and notes:
        import numpy as np

        mats = []
        for spec, own in zip(plan, owners, strict=True):
            path = root / "shards" / spec.id / vectors.FILE
            mats.append(vectors.read_matrix(path, len(own), dim) if path.is_file()
                        else np.zeros((len(own), dim), dtype=np.float32))
        vecs = note_vectors(len(notes), dim, [np.asarray(o, dtype=np.int64) for o in owners],
                            mats)
        known = similar_inputs(
            previous, [n.path for n in notes], [blobs.get(n.path, "") for n in notes], linked, vecs,
            similar_k, head.embeddings, set(rebuilt), link_key) if previous else None
        similar = similar_notes(vecs, linked, similar_k, changed=known and known[0],
                                old=known and known[1], stats=counts,
                                progress=lambda done, total: report("similar", done, total))
    seconds["similar"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    report("notes", 0, 2)
    table = notes_table(notes, blobs, domain_of, shard_of, spans, similar)
    report("notes", 1, 2)
    write_notes(root, table, statuses, similar_k if dim else 0,
                _row_reuse(previous, notes, blobs) if previous is not None else None)
    seconds["links"] += time.perf_counter() - t0
    report("notes", 2, 2)
    write_hook_links(root, notes)
    write_concepts(root, vault, notes, previous,
                   progress=lambda done, total: report("concepts", done, total))
    t0 = time.perf_counter()
    mentions = write_mentions(root, vault, notes, previous, link_key)
    seconds["mentions"] = time.perf_counter() - t0

    similar_rows = counts.get("similar_rows", 0)
    n_links = len(graph.lines)
    manifest = IndexManifest(
        **header_fields(head),
        counts=Counts(notes=len(notes), links=n_links,
                      unresolved_links=sum(len(v) for v in graph.unresolved.values()),
                      chunks=sum(m.chunks for m in shards.values()),
                      vectors=sum(m.vectors for m in shards.values()),
                      shards=len(plan), domains=len({s.domain for s in plan}),
                      markdown_bytes=sum(n.size for n in notes)),
        warnings=tuple(warnings), link_inputs=link_key,
        shards={sid: shards[sid] for sid in sorted(shards)},
        background=_background(root, plan), files={}, mentions=mentions)
    return write_manifest(root, manifest), seconds, similar_rows
