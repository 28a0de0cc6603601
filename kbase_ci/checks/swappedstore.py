"""A note store with some notes swapped: the vault as it was before a change (HEAD's
versions of the notes it changed), or as it will be after a move (`kbase mv`)."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence

from kbase_ci.parsed import ParsedNote
from kbase_ci.vault.notestore import LazySummaries, NoteStore, NoteSummary, summarize


def overlay(store: NoteStore, drop: Collection[str], add: Mapping[str, ParsedNote]
            ) -> NoteStore:
    """`store` with the notes at `drop` removed and `add` put in (by path), decoding
    nothing more than `store` itself would."""
    gone = set(drop) | set(add)
    added = {p: summarize(n) for p, n in add.items()}
    extra = dict(add)
    if gone == set(add) and all(store.__contains__(p) for p in gone):
        # Only contents swapped (an edit): the paths stand, and nothing walks all 38k
        # of them again (the hook's new-only check asks this on every finding).
        paths: Sequence[str] = store.paths
        summaries: Mapping[str, NoteSummary] = _Swapped(store, added)
    else:
        paths = [*(p for p in store.paths if p not in gone), *add]
        kept = [p for p in store.paths if p not in gone]
        # Lazy, like the store under it: the old-state resolver needs names and aliases
        # only, and reading every summary row would cost a rename ~0.15 s on 10k notes.
        summaries = LazySummaries(kept, lambda: {p: store.summary(p) for p in kept}, added)

    def aliases() -> dict[str, tuple[str, ...]]:
        kept = {p: a for p, a in store.aliases().items() if p not in gone}
        return {**kept, **{p: s.aliases for p, s in added.items() if s.aliases}}

    def load(wanted: Sequence[str]) -> dict[str, ParsedNote]:
        out = {p: extra[p] for p in wanted if p in extra}
        rest = [p for p in wanted if p not in out]
        out.update({n.path: n for n in store.load(rest)})
        return out

    # Tag spellings as counted now: of the notes whose tags changed, only the ones the
    # caller checks matter, and those it checks by their own tags.
    return NoteStore(paths, summaries, load, extra, aliases=aliases,
                     tag_variants=store.tag_variants)


class _Swapped(Mapping[str, NoteSummary]):
    """`store`'s summaries, with those of `swapped` paths replaced."""

    def __init__(self, store: NoteStore, swapped: Mapping[str, NoteSummary]) -> None:
        self._store, self._swapped = store, swapped

    def __getitem__(self, path: str) -> NoteSummary:
        got = self._swapped.get(path)
        if got is not None:
            return got
        if not self._store.__contains__(path):
            raise KeyError(path)
        return self._store.summary(path)

    def __contains__(self, path: object) -> bool:
        return self._store.__contains__(path)  # by path: NoteStore's own test

    def __iter__(self) -> Iterator[str]:
        return iter(self._store.paths)

    def __len__(self) -> int:
        return len(self._store.paths)
