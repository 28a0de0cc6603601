"""Per note, the most similar notes it does not already link to: precomputed at build time
so that "related notes" queries need no model.

A note's vector is the normalised mean of its chunk vectors, as read back from the shard
files (f16), so a fresh, an incremental and a merged build all start from the same
numbers. A list holds the `k` best notes by cosine similarity rounded to 3 decimals,
then by note number (= path order), with score > 0. Listed scores are computed in
float64 so that the rounding does not depend on how BLAS orders a sum.

An incremental build recomputes only what can have changed: rows of notes whose text
or links changed, rows whose old list names such a note, and, for every other row, the
scores against the changed notes merged into its old list. That equals a full
recomputation: every note outside the old top k was beaten by k unchanged notes that
still beat it. What can have changed, and each unchanged note's previous list
renumbered, come from the previous index (`similar_inputs`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kbase_ci.index.blocks import Embeddings
from kbase_ci.index.layout import LINKS_FILE
from kbase_ci.index.previous import PreviousIndex
from kbase_ci.index.vectors import unit_matrix
from kbase_ci.vault.indextables import NotesCore

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Row = list[list[float]]
_BLOCK = 512
_GROUP = 128
_MARGIN = 0.002
_MIN_SCORE = 0.0004  # rounds to 0.000 or less: never listed


def note_vectors(n_notes: int, dim: int, chunk_notes: Sequence[npt.NDArray[np.int64]],
                 chunk_vectors: Sequence[npt.NDArray[np.float32]]) -> npt.NDArray[np.float64]:
    """Unit-length mean vector per note; `chunk_notes[i][j]` is the note number of chunk j
    of shard i. Notes without any non-zero chunk vector get a zero row."""
    import numpy as np

    sums = np.zeros((n_notes, dim), dtype=np.float64)
    for owners, vecs in zip(chunk_notes, chunk_vectors, strict=True):
        if not len(owners):
            continue
        # A note's chunks are consecutive rows of its shard: sum each run (np.add.at,
        # one row at a time, was most of an incremental build's similar stage).
        if np.any(owners[1:] < owners[:-1]):  # not our layout: sum row by row
            np.add.at(sums, owners, vecs.astype(np.float64))
            continue
        starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
        if len(starts) == len(owners):  # one chunk per note (short notes): no sums
            sums[owners] = vecs
        else:
            sums[owners[starts]] = np.add.reduceat(vecs.astype(np.float64), starts, axis=0)
    # einsum, not linalg.norm: a third of the time over 38k rows, same for every build.
    norms = np.sqrt(np.einsum("ij,ij->i", sums, sums))[:, None]
    unit: npt.NDArray[np.float64] = np.divide(sums, norms, out=np.zeros_like(sums),
                                              where=norms > 0)
    return unit


def similar_notes(vectors: npt.NDArray[np.float64], linked: Sequence[Sequence[int]], k: int,
                  changed: Sequence[bool] | None = None,
                  old: Sequence[Row | None] | None = None,
                  stats: dict[str, int] | None = None,
                  progress: Callable[[int, int], None] | None = None) -> list[Row]:
    """For each note, up to `k` pairs [other note number, score], best first, excluding
    itself and the notes in `linked[i]`. With `changed` and `old` (the previous lists,
    renumbered; None where unknown) only what can differ is recomputed. `stats` gets
    `similar_rows`: how many rows were computed in full. `progress(done, total)` is told
    the rows computed in full so far (a 38k-note vault takes half a minute here)."""
    stats = stats if stats is not None else {}
    import numpy as np

    n = len(vectors)
    k = min(k, n - 1)
    out: list[Row] = [[] for _ in range(n)]
    stats["similar_rows"] = 0
    if k <= 0:
        return out
    has = np.any(vectors != 0, axis=1)
    if changed is None or old is None:
        stats["similar_rows"] = n
        return _full(vectors, has, linked, k, list(range(n)), out, progress)
    moved = np.asarray(changed, dtype=bool)
    redo: list[int] = []
    keep: list[int] = []
    for i in range(n):
        prev = old[i]
        if prev is None or moved[i] or any(moved[int(j)] for j, _ in prev):
            redo.append(i)
        else:
            keep.append(i)
    stats["similar_rows"] = len(redo)
    _full(vectors, has, linked, k, redo, out, progress)
    cols = np.flatnonzero(moved & has)
    for start in range(0, len(keep), _BLOCK):
        rows = keep[start:start + _BLOCK]
        scores = _scores(vectors, rows, cols)
        # Only a changed note scoring at least a row's current k-th can enter its list.
        floor = np.asarray([old_row[k - 1][1] if len(old_row := old[i] or []) >= k
                            else 0.0 for i in rows])
        hits = (scores > 0) & (scores >= floor[:, None])
        for r in np.flatnonzero(hits.any(axis=1)).tolist():
            i = rows[r]
            skip = set(linked[i])
            cand = [(round(float(scores[r, c]), 3), int(cols[c]))
                    for c in np.flatnonzero(hits[r]).tolist()
                    if int(cols[c]) not in skip and int(cols[c]) != i]
            prev = old[i] or []
            merged = sorted([(float(s), int(j)) for j, s in prev] + cand,
                            key=lambda p: (-p[0], p[1]))[:k]
            out[i] = [[j, s] for s, j in merged]
        for r, i in enumerate(rows):
            if not hits[r].any():
                out[i] = list(old[i] or [])
    return out


def _scores(vectors: npt.NDArray[np.float64], rows: Sequence[int] | npt.NDArray[np.int64],
            cols: npt.NDArray[np.int64] | None = None) -> npt.NDArray[np.float64]:
    import numpy as np

    other = vectors if cols is None else vectors[cols]
    scores: npt.NDArray[np.float64] = vectors[np.asarray(rows, dtype=np.int64)] @ other.T
    np.round(scores, 3, out=scores)
    return scores


def _full(vectors: npt.NDArray[np.float64], has: npt.NDArray[np.bool_],
          linked: Sequence[Sequence[int]], k: int, which: Sequence[int],
          out: list[Row], progress: Callable[[int, int], None] | None = None) -> list[Row]:
    """Lists for the rows in `which`, computed from all notes.

    A float32 product finds, per row, every note that can make the list: rounding is
    monotonic, so the k-th best rounded score is the rounded k-th best score, and no
    note more than 0.001 below that can reach it (float32 adds ~1e-6 of error; the
    margin is 0.002). Only those candidates are scored in float64 and rounded, which
    keeps a 38k-note vault to seconds instead of a float64 product of every pair."""
    import numpy as np

    v32 = vectors.astype(np.float32)
    for start in range(0, len(which), _BLOCK):
        if progress is not None:
            progress(start, len(which))
        rows = np.asarray(which[start:start + _BLOCK], dtype=np.int64)
        scores = v32[rows] @ v32.T
        scores[:, ~has] = -np.inf
        local = np.arange(len(rows))
        scores[local, rows] = -np.inf
        for r, i in enumerate(rows.tolist()):
            if linked[i]:
                scores[r, np.asarray(linked[i], dtype=np.int64)] = -np.inf
        floor = np.maximum(_kth_best(scores, k) - _MARGIN, _MIN_SCORE)
        r_idx, c_idx = np.nonzero(scores >= floor[:, None])
        exact = np.einsum("ij,ij->i", vectors[rows[r_idx]], vectors[c_idx])
        np.round(exact, 3, out=exact)
        order = np.lexsort((c_idx, -exact, r_idx))
        r_idx, c_idx, exact = r_idx[order], c_idx[order], exact[order]
        bounds = np.searchsorted(r_idx, np.arange(len(rows) + 1))
        for r, i in enumerate(rows.tolist()):
            if not has[i]:
                continue
            lo, hi = int(bounds[r]), int(bounds[r + 1])
            out[i] = [[int(j), round(float(v), 3)] for j, v in
                      zip(c_idx[lo:hi], exact[lo:hi], strict=True) if v > 0][:k]
    if progress is not None:
        progress(len(which), len(which))
    return out


def _kth_best(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.float32]:
    """Per row, the k-th largest score (-inf when a row has fewer finite ones). Rows are
    cut into groups of `_GROUP`: the k largest lie in the k groups with the largest
    maxima, so only those are partitioned (whole 10k-long rows were the cost here)."""
    import numpy as np

    rows, n = scores.shape
    pad = (-n) % _GROUP
    padded = np.concatenate([scores, np.full((rows, pad), -np.inf, dtype=scores.dtype)],
                            axis=1) if pad else scores
    maxima = padded.reshape(rows, -1, _GROUP).max(axis=2)
    groups = min(k, maxima.shape[1])
    top = np.argpartition(-maxima, groups - 1, axis=1)[:, :groups]
    cols = (top[:, :, None] * _GROUP + np.arange(_GROUP)).reshape(rows, -1)
    vals = np.take_along_axis(padded, cols, axis=1)
    kth: npt.NDArray[np.float32] = -np.partition(-vals, k - 1, axis=1)[:, k - 1]
    return kth


def similar_inputs(previous: PreviousIndex, paths: Sequence[str], blobs: Sequence[str],
                   linked: Sequence[Sequence[int]], vectors: npt.NDArray[np.float64],
                   k: int, embeddings: Embeddings, rebuilt: set[str],
                   link_key: str) -> tuple[list[bool], list[Row | None]] | None:
    """(changed, old) for `similar.similar_notes`, or None to recompute everything.

    changed[i]: note i is new or its vector differs from the previous build's (only
    notes of `rebuilt` shards can differ: the others' shard files are the same bytes).
    old[i]: its previous list renumbered, or None when its links changed or a note
    in the list is gone."""
    import numpy as np

    if previous.manifest.embeddings != embeddings:
        return None
    core = previous.core()
    if core is None or core.similar_k != k:
        return None
    lists = previous.similar_lists(k)
    if lists is None:
        return None
    prev_paths: list[str] = core.paths
    prev_no = {p: i for i, p in enumerate(prev_paths)}
    number = {p: i for i, p in enumerate(paths)}
    wanted = {prev_no[p] for p in rebuilt if p in prev_no}
    old_vecs = _note_vectors(previous, core, vectors.shape[1], wanted)
    if old_vecs is None:
        return None
    same_links = previous.manifest.link_inputs == link_key
    prev_linked = None if same_links else _linked(previous, len(prev_paths))
    if not same_links and prev_linked is None:
        return None
    prev_blob = core.blobs or []
    same_paths = prev_paths == list(paths)
    changed: list[bool] = []
    old: list[Row | None] = []
    for i, path in enumerate(paths):
        j = prev_no.get(path)
        if j is None:
            changed.append(True)
            old.append(None)
            continue
        changed.append(j in old_vecs and not np.array_equal(old_vecs[j], vectors[i]))
        if prev_linked is None:  # same link inputs: only edited notes link anew
            relinked = prev_blob[j] != blobs[i]
        else:
            relinked = {paths[t] for t in linked[i]} != {prev_paths[t]
                                                         for t in prev_linked[j]}
        if relinked:
            old.append(None)
            continue
        if same_paths:  # note numbers did not move: the list is as it was
            old.append(lists[j])
            continue
        row: Row = []
        for t, score in lists[j]:
            moved = number.get(prev_paths[int(t)])
            if moved is None:
                row = []
                break
            row.append([moved, score])
        old.append(row if len(row) == len(lists[j]) else None)
    return changed, old



def _linked(previous: PreviousIndex, n: int) -> list[set[int]] | None:
    """Per previous note, the notes it linked to (None: links table unreadable).
    Read only when link inputs changed."""
    import io

    import numpy as np

    data = previous.data(LINKS_FILE)
    if data is None:
        return None
    links = np.load(io.BytesIO(data), allow_pickle=False)
    out: list[set[int]] = [set() for _ in range(n)]
    for src, target in links[:, :2].tolist():
        if target >= 0 and target != src:
            out[src].add(target)
    return out



def _note_vectors(previous: PreviousIndex, core: NotesCore, dim: int,
                  wanted: set[int]) -> dict[int, npt.NDArray[np.float64]] | None:
    """Previous vectors of the `wanted` notes, from the previous shard files."""
    import numpy as np

    out: dict[int, npt.NDArray[np.float64]] = {}
    groups, group = core.groups, core.group
    for sid in sorted({groups[group[i]][0] for i in wanted}):
        got = previous.shard_vectors(sid)
        if got is None:
            return None
        spans, vecs = got
        owners = np.asarray([i for i, (_, n) in spans.items() for _ in range(n)],
                            dtype=np.int64)
        mat = unit_matrix(vecs, len(owners), dim) if vecs is not None else \
            np.zeros((len(owners), dim), dtype=np.float32)
        # Numbered within the shard: a mean over its few notes, not a 38k-row matrix
        # of zeros for a vault of short notes.
        present, local = np.unique(owners, return_inverse=True)
        means = note_vectors(len(present), dim, [local.astype(np.int64)], [mat])
        out.update((int(g), means[j]) for j, g in enumerate(present.tolist())
                   if g in wanted)
    for i in wanted:  # a note without chunks has a zero vector
        out.setdefault(i, np.zeros(dim, dtype=np.float64))
    return out
