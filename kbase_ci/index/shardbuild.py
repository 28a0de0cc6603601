"""Build one shard directory: `chunks.json` (how many chunks each note has),
`chunks.lines.npy` (each chunk's lines), `bm25/` and `vectors.npy`.

A shard depends only on its own notes, the tokenizer and the model, so shards are built
independently (in worker processes when there are several) and a shard whose inputs
did not change is copied from the previous index instead. `inputs_digest` is the key
for that reuse: anything that can change a shard's bytes must be part of it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbase_ci.index import ann, bm25, chunks, cosinebaseline, tokens, vectorfile, vectors
from kbase_ci.index.chunks import embed_text
from kbase_ci.index.layout import CHUNK_LINES_FILE, CHUNKS_FILE
from kbase_ci.index.manifest import dump_table
from kbase_ci.index.modelfolder import TextEmbedder, open_embedder
from kbase_ci.index.rowfile import offsets_dtype, write_npy
from kbase_ci.index.storednotes import chunk_notes
from kbase_ci.parsed import PARSER_VERSION, ParsedNote
from kbase_ci.vault.indextables import FORMAT_VERSION

# Notes the parser could not read as text at all (a binary file named .md): no chunks.
_UNREADABLE = "KB002"


@dataclass(frozen=True, slots=True)
class ShardJob:
    id: str
    notes: tuple[ParsedNote, ...]
    contents: dict[str, bytes]
    model: Path | None
    out: Path
    dim: int | None = None
    """`embeddings.dim` (None: all of the model's dimensions)."""
    stemmer: str = tokens.STEMMER
    """`index.stemmer`."""
    vectors: dict[str, bytes] = field(default_factory=dict)
    """Stored vector rows (`vectorfile.pack`ed) of notes unchanged since the previous build,
    by path: copied, not embedded again."""
    vector_dim: int | None = None
    """The vectors' dimension (the model's, or `embeddings.dim`); None: no vectors."""


@dataclass(frozen=True, slots=True)
class ShardResult:
    id: str
    chunks: int
    vectors: int
    seconds: dict[str, float] = field(default_factory=dict)
    embedded: int = 0
    """Chunks whose rows were computed now (the others' were copied from the previous
    build); identical texts among them, in this shard or others, ran through the model
    once."""


def inputs_digest(shard_id: str, notes: Sequence[tuple[str, str]], model_sha: str | None,
                  max_note_bytes: int, stemmer: str = tokens.STEMMER) -> str:
    """sha256 of everything a shard's files are computed from: (path, blob) pairs, the
    parser, chunker, tokenizer and index formats, and the embedding model's weights."""
    blob = json.dumps({
        "format": FORMAT_VERSION, "parser": PARSER_VERSION, "chunker": chunks.VERSION,
        "max_chars": chunks.MAX_CHARS, "tokens": tokens.settings(stemmer), "bm25": bm25.settings(),
        "vectors": vectors.settings(),
        "background": [cosinebaseline.VERSION, cosinebaseline.QUERIES],
        "model": model_sha, "max_note_bytes": max_note_bytes,
        "shard": shard_id, "notes": [list(n) for n in notes],
    }, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()


def vectors_digest(model_sha: str | None, max_note_bytes: int) -> str:
    """sha256 of everything a chunk's vector depends on besides its note's path and
    content: the parser, chunker and vector formats, and the model. Two builds with the
    same digest give an unchanged note the same vector rows, so an incremental build
    copies them instead of embedding the note again (`ShardJob.vectors`)."""
    blob = json.dumps({
        "format": FORMAT_VERSION, "parser": PARSER_VERSION, "chunker": chunks.VERSION,
        "max_chars": chunks.MAX_CHARS, "vectors": vectors.settings(), "model": model_sha,
        "max_note_bytes": max_note_bytes}, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()


_embedders: dict[tuple[Path, int | None], Any] = {}


def embedder_for(model: Path, dim: int | None = None) -> TextEmbedder:
    """One loaded model per process (worker processes inherit or load their own)."""
    got: TextEmbedder | None = _embedders.get((model, dim))
    if got is None:
        got = _embedders[(model, dim)] = open_embedder(model, dim)
    return got


def use_embedder(model: Path, dim: int | None, embedder: Any | None) -> None:
    """Make `embedder_for(model, dim)` answer with `embedder` (anything with the
    `TextEmbedder` methods a build calls, such as a scope's donor of stored vectors) in this
    process and in build workers forked from it; None forgets it."""
    if embedder is None:
        _embedders.pop((model, dim), None)
    else:
        _embedders[(model, dim)] = embedder


@dataclass(frozen=True, slots=True)
class Chunked:
    """A shard whose chunk and BM25 files are written: what its vectors still need."""

    id: str
    out: Path
    model: Path | None
    dim: int | None
    """`embeddings.dim` (what `embedder_for` is asked with)."""
    vector_dim: int | None
    """The vectors' dimension (None: no vectors)."""
    owners: tuple[str, ...]
    """The note of each chunk, in chunk order."""
    kept: dict[str, bytes]
    """The stored rows of the notes whose vectors are copied (`ShardJob.vectors`)."""
    texts: tuple[str, ...]
    """The embedding text of every other chunk, in chunk order: what the model must give
    rows for (a build embeds each distinct text once, whichever shards hold it)."""
    notes: int
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def needs_model(self) -> bool:
        return self.model is not None and bool(self.owners)


def chunk_shard(job: ShardJob, progress: Callable[[int], None] | None = None) -> Chunked:
    """Write a shard's chunk and BM25 files; `progress(n)` is told when a step (chunking,
    BM25) is done for the shard's n notes, so a long build keeps reporting."""
    tick = progress or (lambda n: None)
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    all_chunks: list[chunks.Chunk] = []
    meta: dict[str, tuple[str, tuple[str, ...]]] = {}
    counts: list[int] = []
    for note in sorted(job.notes, key=lambda n: n.path):  # the order notes.json has
        meta[note.path] = (note.title, note.aliases)
        if any(d.code == _UNREADABLE for d in note.diagnostics):
            counts.append(0)
            continue
        got = chunks.chunk_note(note, job.contents[note.path])
        counts.append(len(got))
        all_chunks.extend(got)
    job.out.mkdir(parents=True, exist_ok=True)
    write_chunks(job.out, all_chunks, counts)
    seconds["chunk"] = time.perf_counter() - t0
    tick(len(job.notes))
    vector_dim = job.vector_dim if job.model is not None else None
    width = (vector_dim + 1) // 2 if vector_dim else 0
    if all_chunks:
        t0 = time.perf_counter()
        texts = [bm25.indexed_text(*meta[c.note], c.heading_path, c.text) for c in all_chunks]
        bm25.build_bm25(texts, job.out / "bm25", job.stemmer)
        seconds["bm25"] = time.perf_counter() - t0
    tick(len(job.notes))
    kept = _kept_rows(job.vectors, all_chunks, width) if width else {}
    return Chunked(job.id, job.out, job.model, job.dim, vector_dim,
                   tuple(c.note for c in all_chunks), kept,
                   tuple(embed_text(meta[c.note][0], c) for c in all_chunks
                         if width and c.note not in kept), len(job.notes), seconds)


def finish_shard(shard: Chunked, rows: Any, nulls: Any) -> ShardResult:
    """Write a shard's vector files from `rows` (float16, one per text of `shard.texts`,
    which the caller may have dropped since; None: no text) and the rows it keeps;
    `nulls`: the model's null questions (`cosinebaseline.null_vectors`, or None). A
    shard without vectors only reports its counts."""
    import numpy as np

    if not shard.needs_model or not shard.vector_dim:
        return ShardResult(shard.id, len(shard.owners), 0, shard.seconds)
    t0 = time.perf_counter()
    width = (shard.vector_dim + 1) // 2
    new = vectorfile.pack(vectorfile.quantize(rows)) if rows is not None else \
        np.zeros((0, width), dtype=np.uint8)
    packed = vectorfile.merge_rows(list(shard.owners), shard.kept, new, width)
    n_vectors = vectorfile.write_packed(packed, shard.out / vectors.FILE)
    if n_vectors >= ann.MIN_ROWS:
        graph, same = vectors.Vectors(packed, shard.vector_dim).graph_files()
        (shard.out / ann.FILE).write_bytes(graph)
        (shard.out / ann.SAME_FILE).write_bytes(same)
    if nulls is not None:
        cosinebaseline.write_shard(shard.out / cosinebaseline.FILE, cosinebaseline.shard_top1(
            vectorfile.unpack(packed, shard.vector_dim), nulls))
    seconds = {**shard.seconds, "vectors": time.perf_counter() - t0}
    return ShardResult(shard.id, len(shard.owners), n_vectors, seconds,
                       0 if rows is None else len(rows))


def embed(model: Path, dim: int | None, texts: Sequence[str]) -> Any:
    """Rows (float16, unit length) of `texts` by the model: one call, whose rows do not
    depend on each other (a transformer runs one text at a time, the static model sums
    each text's own tokens)."""
    return embedder_for(model, dim).encode(texts)


def null_rows(model: Path, dim: int | None) -> Any:
    """The model's null questions as unit rows (`cosinebaseline.null_vectors`), or None."""
    embedder = embedder_for(model, dim)
    return cosinebaseline.null_vectors(model, embedder.dim, embedder)


def _kept_rows(stored: dict[str, bytes], all_chunks: Sequence[chunks.Chunk],
               width: int) -> dict[str, bytes]:
    """The previous rows of the notes that still have exactly as many chunks (a note
    whose content is unchanged always does; anything else is embedded again)."""
    if not stored:
        return {}
    count: dict[str, int] = {}
    for c in all_chunks:
        count[c.note] = count.get(c.note, 0) + 1
    return {p: rows for p, rows in stored.items()
            if p in count and len(rows) == count[p] * width}


def write_chunks(out: Path, all_chunks: Sequence[chunks.Chunk], counts: Sequence[int]
                 ) -> None:
    """`chunks.json` = {"counts": per note of the shard, in path order, how many chunks it
    has}: chunks are numbered note after note, so this maps chunks to notes without
    repeating a path (the reader knows the shard's notes from `notes.json`).
    `chunks.lines.npy` = each chunk's first and last line, two numbers per chunk. The
    heading path is not stored: the note's headings give it (formats 4 and 5 wrote it per
    chunk, which at paragraph grain would have been a tenth of the index)."""

    (out / CHUNKS_FILE).write_bytes(dump_table({"counts": list(counts)}))
    lines = [n for c in all_chunks for n in (c.start_line, c.end_line)]
    write_npy(out / CHUNK_LINES_FILE, lines, offsets_dtype(max(lines, default=0)))


def read_chunk_notes(shard_dir: Path, notes: Sequence[str]) -> list[str]:
    """The note path of every chunk of a built shard, by chunk number; `notes`: the
    shard's note paths, sorted."""
    return chunk_notes(json.loads((shard_dir / CHUNKS_FILE).read_bytes()), notes)


