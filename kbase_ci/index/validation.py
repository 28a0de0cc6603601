"""An index as untrusted input: every table checked for structure, types, bounds and
paths before a query uses it (docs/index-format.md, "Validation").

The index branch is written by whoever can push to it, and `.kbase/` may be committed
by a PR; a manifest whose hashes were recomputed proves nothing about the content. A
query trusts no id, offset or row type it reads: `validate` decodes every table once,
checks every number that indexes another table, every offset against its file, every
path against the repository's rules and every size against a cap, and raises
IndexFormatError naming the file. What it passed is remembered by the manifest's
sha256 under the git dir (`trusted` / `remember`): the manifest pins every file's hash,
and readers check each file against it, so a remembered index needs no second pass.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeGuard

from kbase_ci.errors import IndexFormatError
from kbase_ci.index import ann, cosinebaseline
from kbase_ci.index.bm25files import LENGTHS_FILE, STATS_FILE
from kbase_ci.index.graphcheck import check_graph
from kbase_ci.index.layout import (
    BACKLINK_IDS_FILE,
    BACKLINKS_FILE,
    CHUNK_LINES_FILE,
    CHUNKS_FILE,
    CONCEPTS_FILE,
    LINK_FIELDS,
    LINK_ROWS_FILE,
    LINKS_FILE,
    MENTIONS_FILE,
    NAMES_FILE,
    NOTE_ROWS_FILE,
    OUTGOING_FILE,
    SIMILAR_FILE,
    SIMILAR_SCORES_FILE,
    STORED_NOTE_FIELDS,
    LinkRow,
)
from kbase_ci.index.rowfile import int_table, offsets_name
from kbase_ci.index.storednotes import shard_notes
from kbase_ci.vault.indextables import NotesCore, stored_fields
from kbase_ci.vault.safefs import unsafe_part

IndexReader = Any  # kbase_ci.index.reader.IndexReader (which imports this module)

GRAPH_BYTES_PER_ROW = 4096
"""Cap on a `vectors.usearch` file per chunk of its shard: connectivity 32 at f16 takes
about 800 bytes a distinct row, so a larger file is not this shard's graph."""

def _fail(reader: IndexReader, rel: str, what: str) -> IndexFormatError:
    return IndexFormatError(f"{reader.root}: {rel} {what}: the index is damaged or forged")


def _ints(reader: IndexReader, rel: str, length: int | None = None, *, lo: int = 0,
          hi: int | None = None, rising: bool = False) -> Sequence[int]:
    got: Sequence[int] = reader.ints(rel)
    if length is not None and len(got) != length:
        raise _fail(reader, rel, f"has {len(got)} values, not {length}")
    if len(got) and (min(got) < lo or (hi is not None and max(got) > hi)):
        raise _fail(reader, rel, f"holds a value outside {lo}..{hi}")
    if rising and any(a > b for a, b in itertools.pairwise(got)):
        raise _fail(reader, rel, "is not in ascending order")
    return got


def _rows(reader: IndexReader, rel: str, count: int | None,
          row_ok: Callable[[Any], bool]) -> list[Any]:
    """A row file, its offsets (from 0 to its end, ascending) and every row."""
    rows: list[Any] = reader.rows(rel)
    if count is not None and len(rows) != count:
        raise _fail(reader, rel, f"has {len(rows)} rows, not {count}")
    _ints(reader, offsets_name(rel), len(rows) + 1, hi=len(reader.data(rel)), rising=True)
    ends = reader.ints(offsets_name(rel))
    if len(ends) and (ends[0] != 0 or ends[-1] != len(reader.data(rel))):
        raise _fail(reader, offsets_name(rel), "does not span its rows")
    for i, row in enumerate(rows):
        if not row_ok(row):
            raise _fail(reader, rel, f"row {i} has the wrong shape or types")
    return rows


def _is(value: Any, kind: type | tuple[type, ...]) -> bool:
    return isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)


def _nat(value: Any) -> TypeGuard[int]:
    return _is(value, int) and value >= 0


def _strs(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _pairs(value: Any, first: type, second: type) -> TypeGuard[list[list[Any]]]:
    return isinstance(value, list) and all(
        isinstance(p, list) and len(p) == 2 and _is(p[0], first) and _is(p[1], second)
        for p in value)


def _note_row(row: Any) -> bool:
    if not isinstance(row, list) or not 1 <= len(row) <= len(STORED_NOTE_FIELDS):
        return False
    r = stored_fields(row)
    return (_nat(r.size) and isinstance(r.headings, list) and all(
        isinstance(h, list) and len(h) == 3 and _nat(h[0]) and isinstance(h[1], str)
        and _nat(h[2]) for h in r.headings) and _strs(r.aliases) and _strs(r.tags)
        and _pairs(r.block_ids, str, int) and isinstance(r.frontmatter, dict))


def validate(reader: IndexReader) -> None:
    """Check the whole index read by `reader` (hashing every file as it goes); its
    manifest was checked when it was read (kbase_ci.index.manifest)."""
    core = reader.core()  # its types and ranges checked as it is decoded
    paths, groups, group = core.paths, core.groups, core.group
    k, statuses = core.similar_k, core.link_statuses
    n = len(paths)
    for p in paths:
        why = unsafe_part(p)
        if why is not None:
            raise _fail(reader, "notes.json", f"names a note {p!r}, which {why}")
    if paths != sorted(set(paths)):
        raise _fail(reader, "notes.json", "does not list its notes once each, in order")
    if len(group) != n or not all(_is(g, int) and 0 <= g < len(groups) for g in group):
        raise _fail(reader, "notes.json", "has a group out of range")
    if core.blob_bytes is None:
        if core.blobs is None or len(core.blobs) != n:
            raise _fail(reader, "notes.json", "does not list one blob per note")
    else:
        reader.blobs()  # IndexFormatError unless blobs.npy holds one id per note
    names = reader.names()
    if not isinstance(names, dict) or not all(
            isinstance(v, list) and all(_is(i, int) and 0 <= i < n for i in v)
            for v in names.values()):
        raise _fail(reader, NAMES_FILE, "maps a name to a note that does not exist")
    _rows(reader, NOTE_ROWS_FILE, n, _note_row)
    _ints(reader, SIMILAR_FILE, n * k, hi=max(n - 1, 0))
    _ints(reader, SIMILAR_SCORES_FILE, n * k)
    _links(reader, n, len(statuses))
    _shards(reader, core)
    if reader.has(CONCEPTS_FILE):
        _concepts(reader, n)
    if reader.has(MENTIONS_FILE):
        _mentions(reader, n)


def _mentions(reader: IndexReader, n: int) -> None:
    """mentions.jsonl of this kbase's version (the manifest's `mentions.version`; another
    one is not read: queries scan the notes instead): per note [source, count, places]."""
    from kbase_ci.parse.namematch import VERSION  # loaded only for an index with the table

    block = reader.manifest.mentions
    if block is None or block.version != VERSION:
        return
    _rows(reader, MENTIONS_FILE, n, lambda row: mention_row(row, n))


def mention_row(row: Any, n: int) -> bool:
    """A row of mentions.jsonl of an index of `n` notes: [[source, count, [[line, col,
    length], ...]], ...] (also what a build reuses from the previous index)."""
    return isinstance(row, list) and all(
        isinstance(m, list) and len(m) == 3 and _is(m[0], int) and 0 <= m[0] < n
        and _is(m[1], int) and m[1] >= 1 and isinstance(m[2], list)
        and all(isinstance(p, list) and len(p) == 3 and all(_nat(v) for v in p)
                for p in m[2]) for m in row)


def _concepts(reader: IndexReader, n: int) -> None:
    """concepts.json of this kbase's version: term spellings, per note [term, line, col]
    rows, heading keys -> notes (another version is refused where it is read)."""
    from kbase_ci.parse.conceptmentions import VERSION  # its patterns cost every query ~8 ms

    table = reader.json(CONCEPTS_FILE)
    if not isinstance(table, dict) or table.get("version") != VERSION:
        return
    terms, rows, heads = table.get("terms"), table.get("notes"), table.get("headings")
    if not (isinstance(terms, list) and all(_strs(t) and len(t) == 3 for t in terms)
            and isinstance(rows, list) and len(rows) == n and all(
                isinstance(r, list) and all(
                    isinstance(m, list) and len(m) == 3 and _is(m[0], int)
                    and 0 <= m[0] < len(terms) and _nat(m[1]) and _nat(m[2]) for m in r)
                for r in rows)
            and _pairs(heads, str, list) and all(
                all(_is(i, int) and 0 <= i < n for i in h[1]) for h in heads)):
        raise _fail(reader, CONCEPTS_FILE, "has a term, note or heading out of range")


def _links(reader: IndexReader, n: int, statuses: int) -> None:
    def ok(values: Any) -> bool:
        if not isinstance(values, list) or len(values) != len(LINK_FIELDS):
            return False
        row = LinkRow._make(values)
        target = row.target
        return (_is(row.source, int) and 0 <= row.source < n
                and _nat(row.line) and _nat(row.col)
                and all(isinstance(s, str) for s in (row.raw, row.style, row.subpath,
                                                     row.status))
                and isinstance(row.embed, bool)
                and row.anchor_found in (None, True, False)
                and (target is None or isinstance(target, str)
                     or (_is(target, int) and 0 <= target < n)))

    count = len(_rows(reader, LINK_ROWS_FILE, None, ok))
    _ints(reader, OUTGOING_FILE, n + 1, hi=count, rising=True)
    ptr = _ints(reader, BACKLINKS_FILE, n + 1, rising=True)
    _ints(reader, BACKLINK_IDS_FILE, int(ptr[-1]) if len(ptr) else 0, hi=max(count - 1, 0))
    flat = int_table(reader.data(LINKS_FILE))
    if flat is None or flat[1] != 3 or len(flat[0]) != 3 * count:
        raise _fail(reader, LINKS_FILE, "is not one [source, target, status] per link")
    values = flat[0]
    if count and (min(values[0::3]) < 0 or max(values[0::3]) >= n or min(values[1::3]) < -1
                  or max(values[1::3]) >= n or min(values[2::3]) < 0
                  or max(values[2::3]) >= statuses):
        raise _fail(reader, LINKS_FILE, "holds a note or status number out of range")
    unresolved = reader.json("unresolved.json")
    if not isinstance(unresolved, dict) or not all(
            isinstance(v, list) and all(_is(i, int) and 0 <= i < count for i in v)
            for v in unresolved.values()):
        raise _fail(reader, "unresolved.json", "names a link that does not exist")


def _shards(reader: IndexReader, core: NotesCore) -> None:
    members = shard_notes(core)
    for sid, meta in sorted(reader.manifest.shards.items()):
        base = f"shards/{sid}/"
        if not reader.has(base + CHUNKS_FILE):
            continue
        counts = reader.json(base + CHUNKS_FILE).get("counts") \
            if isinstance(reader.json(base + CHUNKS_FILE), dict) else None
        if not (isinstance(counts, list) and len(counts) == len(members.get(sid, []))
                and all(_nat(c) for c in counts) and sum(counts) == meta.chunks):
            raise _fail(reader, base + CHUNKS_FILE, "does not count the shard's chunks")
        lines = _ints(reader, base + CHUNK_LINES_FILE, 2 * meta.chunks)
        if any(a > b for a, b in zip(lines[0::2], lines[1::2], strict=True)):
            raise _fail(reader, base + CHUNK_LINES_FILE, "has a chunk that ends before it "
                        "starts")
        _shard_vectors(reader, base, meta.chunks)
        postings = reader.bm25(sid)
        if postings is not None:
            postings.validate()
            _bm25_lengths(reader, postings.base, postings.num_docs)
        vectors = reader.vectors(sid)
        if vectors is not None and (vectors.packed.ndim != 2 or
                                    len(vectors.packed) != meta.chunks):
            raise _fail(reader, base + "vectors.npy", "does not hold one row per chunk")


def _bm25_lengths(reader: IndexReader, base: str, docs: int) -> None:
    """A shard's BM25 chunk lengths (one count of tokens per chunk) and their mean in
    its stats, which every hybrid query divides by (issue 38: a float, NaN or short
    lengths file passed validation and then failed every search; a subnormal `avgdl`
    made numpy print a warning)."""
    lengths = _ints(reader, base + LENGTHS_FILE, docs)
    stats = reader.json(base + STATS_FILE)
    got = stats.get("avgdl") if isinstance(stats, dict) else None
    mean = sum(lengths) / docs if docs else 0.0
    # kbase writes `float(np.mean(...))`: a float, within rounding of the exact mean
    if type(got) is not float or not math.isclose(got, mean, rel_tol=1e-9) or \
            stats.get("docs") != docs:
        raise _fail(reader, base + STATS_FILE, "does not give the chunks' count and mean "
                    "length")


def _shard_vectors(reader: IndexReader, base: str, chunks: int) -> None:
    """A shard's graph (`ann`: its size capped, its equal-row map pointing back within
    the shard) and its semantic background (one bounded value per null question)."""
    graph, same = base + ann.FILE, base + ann.SAME_FILE
    if reader.has(graph) != reader.has(same):
        raise _fail(reader, graph, f"comes without {ann.SAME_FILE} or the other way round")
    if reader.has(graph):
        if len(reader.data(graph)) > GRAPH_BYTES_PER_ROW * chunks + (1 << 20):
            raise _fail(reader, graph, "is larger than a graph of this shard can be")
        dim = reader.manifest.embeddings.dim
        try:  # every number usearch follows, before it maps the file
            check_graph(reader.data(graph), int(dim or 0), chunks,
                        int(ann.PARAMS["connectivity"]))
        except IndexFormatError as exc:
            raise _fail(reader, graph, str(exc)) from None
        rows = _ints(reader, same, chunks, lo=-1, hi=max(chunks - 1, 0))
        if any(r > i or (r >= 0 and rows[r] != r) for i, r in enumerate(rows)):
            raise _fail(reader, same, "maps a chunk to a later or non-first equal row")
    if reader.has(base + cosinebaseline.FILE):
        _ints(reader, base + cosinebaseline.FILE, cosinebaseline.QUERIES, hi=cosinebaseline.SCALE)


