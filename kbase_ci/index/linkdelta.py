"""An incremental build's links table: the previous index's rows, with the rows of the
notes that changed (and of the notes linking to them) resolved again.

While `link_inputs` (every note path and alias, every other file, the alias setting) is
what the previous index recorded, a link resolves to the same place as before unless its
own text changed; only whether its heading or block id exists can differ, and only for a
link into a changed note. So the rows of every other note are copied as bytes, and the
result is exactly what `tables.links_table` builds: tests/unit/index/test_index_incremental.py
compares it with a full resolve, and an incremental build with a fresh one file by file.
Re-resolving all 60k links of a 10k-note vault cost ~0.6 s of a one-note rebuild, and
encoding their rows ~0.3 s more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kbase_ci import __version__
from kbase_ci.index.layout import (
    LINK_ROWS_FILE,
    LINKS_FILE,
    NOTES_FILE,
    OUTGOING_FILE,
    UNRESOLVED_FILE,
)
from kbase_ci.index.rowfile import int_table, int_view, offsets_name
from kbase_ci.index.tables import LinkTable, NoteRows
from kbase_ci.vault.resolver import Resolver

if TYPE_CHECKING:
    from kbase_ci.index.previous import PreviousIndex
    from kbase_ci.parsed import ParsedNote

# Past this share of changed notes, copying saves little over resolving everything.
_MAX_CHANGED = 0.25


def patched_links(previous: PreviousIndex, notes: Sequence[ParsedNote], files: Sequence[str],
                  resolve_aliases: bool, link_key: str, blobs: Mapping[str, str], *,
                  include_dot: bool = False) -> LinkTable | None:
    """The links table of `notes` (sorted by path) from the previous index's, or None when
    it cannot be reused (other link inputs, other notes, another kbase, a file that does
    not match the previous manifest, or most notes changed)."""
    if previous.manifest.link_inputs != link_key or \
            previous.manifest.kbase_version != __version__:
        return None
    paths = [n.path for n in notes]
    changed = previous.changed_notes(paths, blobs)
    names = previous.json(NOTES_FILE).get("link_statuses") if changed is not None else None
    if changed is None or not isinstance(names, list) or \
            len(changed) > _MAX_CHANGED * len(paths):
        return None
    old = _previous_table(previous, len(paths))
    if old is None:
        return None
    data, ends, sources, targets, codes, outgoing, unresolved = old
    # A link into a changed note may now find its heading or block id, or lose it.
    dirty = changed | {s for s, t in zip(sources, targets, strict=True)
                       if t in changed and t != s}
    rows: NoteRows | None = None
    table = LinkTable([], [], [], [], {}, len(paths))
    first: list[int] = []
    for i, note in enumerate(notes):
        first.append(len(table.lines))
        if i in dirty:
            if rows is None:
                rows = NoteRows(Resolver(notes, files, resolve_aliases=resolve_aliases,
                                         include_dot=include_dot),
                                {p: k for k, p in enumerate(paths)})
            rows.add(table, i, note)
            continue
        a, b = outgoing[i], outgoing[i + 1]
        table.lines.extend(data[ends[j]:ends[j + 1]] for j in range(a, b))
        table.sources.extend(sources[a:b])
        table.targets.extend(targets[a:b])
        table.statuses.extend(names[c] for c in codes[a:b])
    for key, lids in unresolved.items():
        for lid in lids:
            s = sources[lid]
            if s not in dirty:
                table.unresolved.setdefault(key, []).append(first[s] + lid - outgoing[s])
    for lids in table.unresolved.values():
        lids.sort()
    return table


def _previous_table(previous: PreviousIndex, n_notes: int) -> tuple[
        bytes, Sequence[int], list[int], list[int], list[int], Sequence[int],
        dict[str, list[int]]] | None:
    """(rows bytes, row ends, sources, targets, status codes, outgoing, unresolved) of
    the previous links table, each checked against the previous manifest; None when a
    file is missing, modified or not as kbase writes it."""
    data = previous.data(LINK_ROWS_FILE)
    ends_raw = previous.data(offsets_name(LINK_ROWS_FILE))
    numbers_raw = previous.data(LINKS_FILE)
    outgoing_raw = previous.data(OUTGOING_FILE)
    unresolved: Any = previous.json(UNRESOLVED_FILE)
    if data is None or ends_raw is None or numbers_raw is None or outgoing_raw is None or \
            not isinstance(unresolved, dict):
        return None
    ends, outgoing = int_view(ends_raw), int_view(outgoing_raw)
    numbers = int_table(numbers_raw)
    if ends is None or outgoing is None or numbers is None or numbers[1] != 3:
        return None
    flat = list(numbers[0])
    count = len(ends) - 1
    if len(flat) != 3 * count or len(outgoing) != n_notes + 1 or outgoing[-1] != count or \
            ends[-1] != len(data):
        return None
    return (data, ends, flat[0::3], flat[1::3], flat[2::3], outgoing,
            {str(k): [int(x) for x in v] for k, v in unresolved.items()})

