"""Query words no note holds, read as the index word they are a slip of ("equasion" as
"equation", "certifcate" as "certificate"), so that a typo is not evidence that the vault
does not cover a question (kbase_ci.query.evidence) and, with a reduced weight, BM25
finds the word meant (kbase_ci.query.searcher).

A rule, not a fitted threshold (docs/query.md, "Typos"):

- only a word no chunk holds is read as another: a word the index knows is never
  "corrected" into a different one; nor is a word written as a name (a thing the vault
  never mentions is the topic, not a slip: kbase_ci.query.evidence), one holding a digit,
  one under `SHORTEST` letters, or an English word (`english`: "pasta" is a word the
  vault does not use, not a slip of "past");
- near: the index's terms whose words lie within `reach` Damerau-Levenshtein edits of the
  word as written (one edit for 4-7 letters, two from 8), keeping its first letter, as
  real misspellings do (of codespell's 63,730 English misspellings 97% keep the first
  letter; 88% of those of 4-7 letters and 81% of longer ones are one edit away, 96% of
  the longer ones two). One edit is checked on the words themselves (each edit of the
  word, stemmed as the index stems, looked up); the second, for long words, on the
  stems (`rapidfuzz`);
- in context: a near term counts only where the vault writes it together with the
  query's other words beyond chance (`Searcher.together`: some paragraph holds it with
  other content words of the query whose IDF adds up to more than a word found in one
  paragraph, the bar of evidence's `words`). A real word the vault never uses is often
  one edit from one it does ("contract" and "contrast", "chart" and "chat"); a slip of
  a word the vault answers with stands among the question's other words there.

In BM25 a word read as a slip counts as the word meant at `WEIGHT`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Protocol

from kbase_ci.index.tokens import stemmer

SHORTEST = 4
"""Words shorter than this are never read as another word (most short words are a
letter away from several others)."""
LONGER = 8
"""Words of this many letters or more may be two edits from the word meant."""
WEIGHT = 0.25
"""How much a word read as a slip weighs in BM25 against a word as written."""
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
WORDS = Path(__file__).with_name("english-words.txt")
"""English words of `SHORTEST` - 1 letters or more, one a line (`#` a comment): BERT
uncased's whole words (bench/english_words.py)."""


def reach(word: str) -> int:
    """How many edits from the word as written a word meant may be: 0 (never read as
    another) below `SHORTEST` letters or with anything but letters."""
    if not word.isalpha() or len(word) < SHORTEST:
        return 0
    return 1 if len(word) < LONGER else 2


@cache
def _english() -> str:
    """The words of `WORDS`, each between two line breaks (after its `#` lines)."""
    text = WORDS.read_text(encoding="utf-8")
    return text[text.find("\n", text.rfind("#")):]


def english(word: str) -> bool:
    """Whether `word` (lower case) is an English word (`WORDS`), or one's plural: a word
    of the language the vault does not use, never a slip of one it does. A query asks
    this of a few words, so the text is searched as it is (~0.1 ms a word): a set of its
    21k words costs ~10 ms to build."""
    words = _english()
    return f"\n{word}\n" in words or (word.endswith("s") and f"\n{word[:-1]}\n" in words)


def edits(word: str) -> set[str]:
    """Every string one Damerau-Levenshtein edit from `word` (a letter deleted, inserted,
    replaced, or two neighbours swapped) that keeps its first letter."""
    letters = _LETTERS + "".join(sorted(set(word) - set(_LETTERS)))
    out: set[str] = set()
    for i in range(1, len(word) + 1):
        head, tail = word[:i], word[i:]
        if tail:
            out.add(head + tail[1:])
            out.update(head + c + tail[1:] for c in letters)
        if len(tail) > 1:
            out.add(head + tail[1] + tail[0] + tail[2:])
        out.update(head + c + tail for c in letters)
    out.discard(word)
    return out


def near(word: str, term: str, vocabulary: Mapping[str, int],
         stem: Callable[[str], str]) -> dict[str, tuple[int, str]]:
    """The index terms (of `vocabulary`: the terms beginning with the word's first letter,
    with their document frequencies) that `word` (as written, lowercased; `term` its own
    stem) may be a slip of: term -> (edits, the word one edit away that gives it, or the
    term itself for two edits)."""
    allowed = reach(word)
    if not allowed:
        return {}
    out: dict[str, tuple[int, str]] = {}
    # Of the edits giving one term the one shown is the term itself (a word its own
    # stem), else the longest (a letter left out is the commonest slip), the first in
    # order of those.
    for e in sorted(edits(word), key=lambda e: (-len(e), e)):
        got = stem(e)
        if got != term and got in vocabulary and (got not in out or e == got):
            out[got] = (1, e)
    if not out and allowed > 1:
        from rapidfuzz import process
        from rapidfuzz.distance import DamerauLevenshtein

        for got, dist, _ in process.extract(term, sorted(vocabulary),
                                            scorer=DamerauLevenshtein.distance,
                                            score_cutoff=2, limit=None):
            if got != term and got[:1] == term[:1]:
                out[got] = (int(dist), got)
    return out


class Terms(Protocol):
    """What reading a slip asks of the query's content terms (kbase_ci.query.queryterms.
    QueryTerms, which is made with the slips read)."""

    @property
    def written(self) -> tuple[tuple[str, str], ...]: ...

    @property
    def idf(self) -> dict[str, float]: ...

    @property
    def unknown(self) -> frozenset[str]: ...

    @property
    def rare(self) -> float: ...

    @property
    def names(self) -> frozenset[str]: ...

    @property
    def terms(self) -> list[str]: ...


class Index(Protocol):
    """What reading a slip asks of the query's searcher (kbase_ci.query.searcher)."""

    stemmer: str

    def near_terms(self, first: str) -> dict[str, int]: ...

    def idf(self, terms: list[str]) -> tuple[int, dict[str, float]]: ...

    def together(self, term: str, others: tuple[str, ...], idf: dict[str, float]
                 ) -> float: ...


def read(q: Terms, index: Index, chance: float = 1.0) -> list[tuple[str, str, str]]:
    """(as written, read as, term) for each word of `q` (the query's content terms) no
    note holds, not a name, that is a slip of an index term (`near`) found in some chunk
    with the query's other known words beyond chance: their IDF and its own add up to
    more than `chance` words found in one chunk (`q.rare`). Of several, the fewest edits
    away, then the one in the most chunks, then the rarest together."""
    stem = stemmer(index.stemmer)
    known = tuple(t for t in q.terms if t not in q.unknown)
    out: list[tuple[str, str, str]] = []
    for written, term in q.written:
        word = written.lower()
        if term not in q.unknown or term in q.names or english(word):
            continue
        found = near(word, term, index.near_terms(word[:1]), stem) if word else {}
        if not found:
            continue
        idf = {**q.idf, **index.idf(sorted(found))[1]}
        best: tuple[int, int, float, str] | None = None
        for got, (edits_away, _) in found.items():
            mass = index.together(got, tuple(k for k in known if k != got), idf)
            if mass > chance * q.rare:
                key = (edits_away, -index.near_terms(word[:1])[got], -mass, got)
                best = key if best is None or key < best else best
        if best is not None:
            out.append((written, found[best[3]][1], best[3]))
    return out


def notice(read: list[tuple[str, str, str]] | tuple[tuple[str, str, str], ...]) -> str:
    """What an answer says of the words `read` as slips (None of them: no notice)."""
    said = ", ".join(f"{w!r} as {r!r}" for w, r, _ in read)
    return f"read as misspellings of words the notes hold (no note holds them): {said}"
