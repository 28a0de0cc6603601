"""Undocumented concepts a PR introduces or closes (the PR report's concept gaps).

A concept (see `concepts`) is a gap at a commit when at least `min_notes` notes mention
it and no note title, alias or heading has its key. Only notes whose blob differs between
the two commits can change a concept's spread, so only they are extracted in full; the
unchanged notes are scanned for the candidate terms (a casefolded substring test, then
a full extraction of the notes that pass), and a term stops being counted once it
reaches `min_notes` there (it is then a gap, or not, on both sides alike). Once every
candidate has, the remaining notes are read only if some result could still be undone
by one of their headings.

*New*: a gap at the head that was not one at the base (it crossed the threshold, or
lost the note that documented it). *Closed*: a gap at the base that a title, alias or
heading at the head now documents.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kbase_ci.parse.conceptmentions import Mention, extract, heading_keys, name_keys
from kbase_ci.parse.outline import note_text, note_title
from kbase_ci.parsed import Count, Many, RepoPath, Text
from kbase_ci.typedjson import Record
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.scanner import open_store

MAX_PLACES = 5
_BATCH = 500
_PREFILTER = 32
"""Up to this many open concepts, an unchanged note is searched for each before it is
read for mentions; with more, a PR's own text would make that search cost (concepts x
vault size: a note of 10k names against a large vault), so every note is read (linear)."""
"""Unchanged notes read per `git cat-file` batch: reading stops early once every
candidate has reached the threshold among them."""


class Place(Record):
    path: RepoPath
    line: Count


class ConceptChange(Record):
    name: Text
    """As first written (notes of the PR first, then path order)."""
    key: Text
    notes: Count
    """Notes that mention it (at the head for a new gap, at the base for a closed one;
    for a closed one, a lower bound once it reached the threshold)."""
    places: Many[Place] = ()
    """Its first mention in some of those notes, the PR's notes first."""


@dataclass(frozen=True)
class ConceptDiff:
    new: tuple[ConceptChange, ...] = ()
    closed: tuple[ConceptChange, ...] = ()


def _by_key(mentions: Mapping[str, list[Mention]]) -> dict[str, list[tuple[str, int]]]:
    """key -> (note, line of its first mention there), in `mentions` order."""
    out: dict[str, list[tuple[str, int]]] = {}
    for path, ms in mentions.items():
        firsts: dict[str, int] = {}
        for m in ms:
            firsts.setdefault(m.key, m.line)
        for key, line in firsts.items():
            out.setdefault(key, []).append((path, line))
    return out


def _names(paths: Iterable[str], aliases: Mapping[str, Iterable[str]]) -> set[str]:
    out = {k for p in paths for k in name_keys(note_title(p))}
    out.update(k for names in aliases.values() for a in names for k in name_keys(a))
    return out


def _mentions(vault: Vault, paths: list[str]) -> tuple[dict[str, list[Mention]], set[str]]:
    """Mentions of each note, and the keys of their headings."""
    files = [nf for p in paths if (nf := vault.note(p)) is not None]
    out: dict[str, list[Mention]] = {}
    heads: set[str] = set()
    for path, data in vault.read(files).items():
        text = note_text(data)
        out[path] = extract(text)
        heads |= heading_keys(text)
    return out, heads


def concept_diff(head: Vault, base: Vault, head_aliases: Mapping[str, Iterable[str]],
                 base_aliases: Mapping[str, Iterable[str]], *,
                 min_notes: int = 3) -> ConceptDiff:
    """Concept gaps `head` has that `base` has not (new), and the reverse that the head
    documents (closed). `*_aliases`: every note's aliases (path -> names) on each side."""
    hb = {nf.path: nf.sha for nf in head.notes}
    bb = {nf.path: nf.sha for nf in base.notes}
    changed_head = sorted(p for p, sha in hb.items() if bb.get(p) != sha)
    changed_base = sorted(p for p, sha in bb.items() if hb.get(p) != sha)
    if not changed_head and not changed_base:
        return ConceptDiff()
    after, heads_after = _mentions(head, changed_head)
    before, heads_before = _mentions(base, changed_base)
    same = [nf for nf in head.notes if bb.get(nf.path) == nf.sha]
    # A name the changed notes write only at sentence starts has no evidence of being
    # one (as `kbase gaps` judges it: kbase_ci.query.undocumented).
    candidates = {m.key for ms in (*after.values(), *before.values()) for m in ms
                  if m.kind != "initial"}
    names_after = _names(hb, head_aliases) | heads_after
    names_before = _names(bb, base_aliases) | heads_before
    candidates |= names_after - names_before
    counts = dict.fromkeys(candidates, 0)
    places: dict[str, list[tuple[str, int]]] = {k: [] for k in candidates}
    open_keys = set(candidates)
    shown: dict[str, str] = {}
    for ms in (*after.values(), *before.values()):
        for m in ms:
            shown.setdefault(m.key, m.name)
    shared: set[str] = set()  # heading keys of the unchanged notes read so far
    done = 0
    while done < len(same) and open_keys:  # stop once every candidate is decided
        batch = same[done:done + _BATCH]
        done += len(batch)
        for path, data in head.read(batch).items():
            text = note_text(data)
            shared |= heading_keys(text)
            low = text.casefold()
            if len(open_keys) <= _PREFILTER and not any(k in low for k in open_keys):
                continue
            for m in extract(text):
                shown.setdefault(m.key, m.name)
                if m.key in open_keys:
                    counts[m.key] += 1
                    places[m.key].append((path, m.line))
                    if counts[m.key] >= min_notes:
                        open_keys.discard(m.key)

    # key -> notes mentioning it, in one pass (per key over every mention: quadratic)
    where_after, where_before = _by_key(after), _by_key(before)

    def judge() -> ConceptDiff:
        new, closed = [], []
        for key in sorted(candidates):
            if key in shared:  # a heading nobody changed documents it on both sides
                continue
            mention_after = where_after.get(key, [])
            mention_before = where_before.get(key, [])
            spread_after = counts[key] + len(mention_after)
            spread_before = counts[key] + len(mention_before)
            if (key not in names_after and spread_after >= min_notes
                    and (spread_before < min_notes or key in names_before)):
                where = mention_after + places[key]
                new.append(ConceptChange(shown.get(key, key), key, spread_after,
                                         tuple(Place(*w) for w in where[:MAX_PLACES])))
            elif (key not in names_before and spread_before >= min_notes
                  and key in names_after):
                closed.append(ConceptChange(shown.get(key, key), key, spread_before))
        new.sort(key=lambda c: (-c.notes, c.key))
        return ConceptDiff(tuple(new), tuple(closed))

    result = judge()
    flagged = {c.key for c in (*result.new, *result.closed)}
    if flagged and done < len(same):
        # The notes not read yet only matter through headings that name a flagged key.
        for start in range(done, len(same), _BATCH):
            for data in head.read(same[start:start + _BATCH]).values():
                text = note_text(data)
                low = text.casefold()
                if any(k in low for k in flagged):
                    shared |= heading_keys(text)
        result = judge()
    return result


def pr_concepts(head: Vault, base: Vault, *, use_cache: bool = True,
                min_notes: int = 3) -> ConceptDiff:
    """`concept_diff` with each side's aliases from the parse cache."""

    return concept_diff(head, base, open_store(head, use_cache=use_cache)[0].aliases(),
                        open_store(base, use_cache=use_cache)[0].aliases(),
                        min_notes=min_notes)
