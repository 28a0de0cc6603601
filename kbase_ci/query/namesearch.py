"""Notes an unknown name probably means, for a query's "no note named X" (issue 29).

Character similarity alone suggests the note whose name *looks* like what was typed:
`backlinks Hashing` got `Type Casting`, `Caching` got `C`, while `Hash Function` and
`CPU Cache` exist. Agents type concepts, not misspellings, so names are also searched
by their words: BM25 over each note's title and aliases (weight 2) and headings
(weight 1), words stemmed as the index stems them (`hashing` -> `hash`). A
near-identical spelling (a slip) still comes first; a weak one is dropped when the words
found something.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from kbase_ci.index.tokens import query_terms

SLIP = 80
"""rapidfuzz `ratio` (case-folded) at which a name counts as the same name mistyped."""
LOOSE = 95
"""WRatio below which a name is not offered when neither a slip nor the words find one.
Chosen with `python -m bench.name_suggest --loose-sweep` on its own cases and reported
on bench.typos' (another typo set): at the old 50 this rule offered 23 right names and
373 wrong ones there (2 and 466 on the report set): `Nope` got `Syntactic Scope`. At 95
it offers none on either set (0 right, 0 wrong); the slip and word rules are unchanged."""
COVER = 0.5
"""Share of the name's words (weighted by idf) a note must have to be suggested."""
K1, B = 1.2, 0.75
NAME_WEIGHT = 2


@dataclass(frozen=True, slots=True)
class Named:
    """What a note is called: its title, aliases and headings."""

    title: str
    aliases: tuple[str, ...] = ()
    headings: tuple[str, ...] = ()


class NameIndex:
    """The names of a vault's notes, tokenized once (state: the term counts per note)."""

    def __init__(self, notes: Sequence[Named], stemmer: str = "english") -> None:
        self.notes = list(notes)
        self.stemmer = stemmer
        self.names: dict[str, str] = {}
        """Title or alias -> the title it names."""
        for n in self.notes:
            self.names.setdefault(n.title, n.title)
            for a in n.aliases:
                self.names.setdefault(a, n.title)
        self._docs = [_terms(n, stemmer) for n in self.notes]
        self._average = sum(sum(d.values()) for d in self._docs) / (len(self._docs) or 1)

    def suggest(self, text: str, limit: int = 3, loose: float | None = LOOSE) -> list[str]:
        """Up to `limit` titles `text` probably means, best first: a slip of a title or
        alias, then the notes whose names share its words; when neither finds one, the
        title most like it at `loose` or more (WRatio; None: none)."""
        from rapidfuzz import fuzz, process, utils

        keys = list(self.names)
        # A slip is judged on the whole strings (`ratio`): WRatio's partial match makes
        # `C` a perfect part of `Caching`.
        spelled = process.extractOne(text, keys, scorer=fuzz.ratio, score_cutoff=SLIP,
                                     processor=utils.default_process)
        found = self.by_words(text, limit)
        if spelled is None and not found and loose is not None:
            spelled = process.extractOne(text, keys, scorer=fuzz.WRatio, score_cutoff=loose)
        out = [self.names[spelled[0]]] if spelled is not None else []
        out += [t for t in found if t not in out]
        return out[:limit]

    def by_words(self, text: str, limit: int = 3) -> list[str]:
        """Titles of the notes whose names best match the words of `text` (BM25)."""
        wanted = set(query_terms(text, stem_with=self.stemmer))
        if not wanted or not self._docs:
            return []
        df = Counter(t for d in self._docs for t in d.keys() & wanted)
        n = len(self._docs)
        idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in wanted}
        mass = sum(idf.values())
        scored: list[tuple[float, str]] = []
        for note, terms in zip(self.notes, self._docs, strict=True):
            hits = wanted & terms.keys()
            # The words a note shares must carry most of what the name says: `No Such
            # Note Anywhere` is not every note with a heading that says `note`.
            if not hits or sum(idf[t] for t in hits) < COVER * mass:
                continue
            length = sum(terms.values())
            score = 0.0
            for t in hits:
                tf = terms[t]
                score += idf[t] * tf * (K1 + 1) / (
                    tf + K1 * (1 - B + B * length / (self._average or 1.0)))
            scored.append((score, note.title))
        scored.sort(key=lambda s: (-s[0], s[1]))
        return list(dict.fromkeys(title for _score, title in scored))[:limit]


def suggest(text: str, notes: Sequence[Named], *, limit: int = 3,
            stemmer: str = "english") -> list[str]:
    """`NameIndex(notes).suggest(text)`: for the one lookup an error message makes."""
    return NameIndex(notes, stemmer).suggest(text, limit)


def _terms(note: Named, stemmer: str) -> Counter[str]:
    out: Counter[str] = Counter()
    for name in (note.title, *note.aliases):
        for t in query_terms(name, stem_with=stemmer):
            out[t] += NAME_WEIGHT
    for heading in note.headings:
        out.update(query_terms(heading, stem_with=stemmer))
    return out
