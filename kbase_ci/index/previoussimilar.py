"""The previous index's similar lists, for an incremental build: which notes' vectors
changed, and each unchanged note's previous list renumbered (or None to recompute it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kbase_ci.index.blocks import Embeddings
from kbase_ci.index.layout import LINKS_FILE
from kbase_ci.index.previous import PreviousIndex, Row
from kbase_ci.index.similar import note_vectors
from kbase_ci.index.vectors import unit_matrix
from kbase_ci.vault.indextables import NotesCore

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


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
