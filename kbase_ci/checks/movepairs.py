"""Notes of identical content renamed in one commit: which went where.

git pairs a renamed file with a source of the same blob by its own rule (the same file
name, else the first source in path order), so two identical notes renamed together
could come out crossed: `notes/alpha.md -> archive/x-beta.md`, and `kbase fix --staged`
then rewrote `[[alpha]]` to `[[x-beta]]` and the check passed (issue 28). Such groups
are paired again here by path similarity: a pair is kept when each is the other's
strictly most similar path (the last old and new path left pair up too); what stays
unpaired is ambiguous and is reported as such, never rewritten (`NoteChanges.ambiguous`:
old path -> the paths it may have gone to).
"""

from __future__ import annotations

from collections.abc import Mapping
from difflib import SequenceMatcher

MIN_NAME = 0.5
"""A pair's file names share at least this much (SequenceMatcher's ratio): `alpha` and
`y-alpha` (0.83) pair; `beta` and `one` (0.29) are no evidence of anything."""
MAX_GROUP = 32
"""Identical notes renamed together beyond this many are not paired by similarity (it
costs the square of the group) and are all ambiguous."""


def pair_identical(old_shas: Mapping[str, str], renames: dict[str, str],
                   deleted: set[str], added: set[str], new_shas: Mapping[str, str]
                   ) -> dict[str, tuple[str, ...]]:
    """Re-pair `renames` whose content did not change and whose blob several of them
    share (in place); move the ones left ambiguous to `deleted` and `added`; return them
    (old path -> the new paths of its group left unpaired)."""
    groups: dict[str, list[str]] = {}
    for old, new in renames.items():
        sha = old_shas.get(old)
        if sha is not None and new_shas.get(new) == sha:
            groups.setdefault(sha, []).append(old)
    ambiguous: dict[str, tuple[str, ...]] = {}
    for olds in groups.values():
        if len(olds) < 2:
            continue
        news = sorted(renames.pop(o) for o in olds)
        pairs = _by_similarity(sorted(olds), news) if len(olds) <= MAX_GROUP else {}
        renames.update(pairs)
        left_old = [o for o in olds if o not in pairs]
        left_new = tuple(n for n in news if n not in pairs.values())
        for o in left_old:
            ambiguous[o] = left_new
            deleted.add(o)
        added.update(left_new)
    return ambiguous


def _by_similarity(olds: list[str], news: list[str]) -> dict[str, str]:
    """Pairs of mutually, strictly most similar paths whose names are at least
    `MIN_NAME` alike, found again among the rest until none is; the last old path left
    goes to the last new one (nothing else is left for it)."""
    pairs: dict[str, str] = {}
    score = {(o, n): _similarity(o, n) for o in olds for n in news}
    left_old, left_new = list(olds), list(news)
    while len(left_old) > 1:
        found = []
        for o in left_old:
            n = _best([(score[o, c], c) for c in left_new])
            if n is not None and score[o, n][0] >= MIN_NAME and \
                    _best([(score[c, n], c) for c in left_old]) == o:
                found.append((o, n))
        if not found:
            return pairs
        for o, n in found:
            pairs[o] = n
            left_old.remove(o)
            left_new.remove(n)
    if left_old:
        pairs[left_old[0]] = left_new[0]
    return pairs


def _best(scored: list[tuple[tuple[float, float], str]]) -> str | None:
    """The path scoring strictly highest; None on a tie."""
    ranked = sorted(scored, key=lambda sc: (-sc[0][0], -sc[0][1], sc[1]))
    if len(ranked) > 1 and ranked[0][0] == ranked[1][0]:
        return None
    return ranked[0][1]


def _similarity(old: str, new: str) -> tuple[float, float]:
    """How alike the file names are (a rename keeps the name, or part of it), then the
    folders: 0 to 1 each."""
    o_dir, _, o_name = old.lower().rpartition("/")
    n_dir, _, n_name = new.lower().rpartition("/")
    name = SequenceMatcher(None, o_name.removesuffix(".md"), n_name.removesuffix(".md"),
                           autojunk=False).ratio()
    folder = SequenceMatcher(None, o_dir, n_dir, autojunk=False).ratio()
    return round(name, 6), round(folder, 6)
