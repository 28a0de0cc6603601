"""A search's query as its rankers and its evidence read it: one `QueryTerms`, made once
per search from the query string (`QueryTerms.of`: the only place a search tokenises
its query) and the index, and passed down to BM25 (paragraph and note level), the
evidence and verdict, and the snippets.

What it holds, each worked out once:

- the words, cut and stemmed as the index cut its notes (`tokens.words`): `ranked`, the
  terms BM25 sums (a repeated one counts again), without the index's stopwords and the
  question words (`tokens.QUESTION_WORDS`), unless that leaves no term ("how to" asks
  for its words);
- `written`, the terms evidence is judged on, as the query writes them: without the
  frame of its question (kbase_ci.query.framewords), a word no note holds read as the
  index word it is a slip of (kbase_ci.query.misspell), and another language's words no
  note holds set `aside`; with which are `unknown` (no chunk holds them) and which of
  those are `names`;
- `idf`: each term's IDF over the index as a rebuild would have it (its document
  frequencies looked up once: kbase_ci.index.idf.Frequencies);
- `prefixes`: the words a snippet looks for (kbase_ci.query.snippets).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from kbase_ci.index import tokens
from kbase_ci.index.idf import idf as idf_of
from kbase_ci.query import misspell
from kbase_ci.query.framewords import frame_words
from kbase_ci.typedjson import Record, json_field

_JOINED = re.compile(r"::|[./_-]")
_LETTERS = re.compile(r"[^\W\d_]+")
"""A run of letters: a word of the query's language (`_english`)."""
_SNIPPET_WORD = re.compile(r"\w{2,}")
_FRAME = frozenset(tokens.QUESTION_WORDS["english"])


class Index(misspell.Index, Protocol):
    """What making a query's terms asks of its searcher (kbase_ci.query.searcher)."""

    stop: frozenset[str]
    question_stop: frozenset[str]

    def unknown(self, terms: list[str]) -> list[str]: ...


class QueryTerms(Record):
    """One search's query as its rankers, evidence, verdict and snippets read it (see the
    module docstring); made by `of`, once per search."""

    written: tuple[tuple[str, str], ...]
    """(as written, term) per distinct term, in query order."""
    idf: dict[str, float]
    """Each term's IDF over the whole index (overlay included)."""
    unknown: frozenset[str] = frozenset()
    """Terms no chunk holds."""
    rare: float = 0.0
    """The IDF of a term found in one chunk of the index: what a term no chunk holds
    weighs, and the unit the chance of a paragraph's words is measured in."""
    names: frozenset[str] = frozenset()
    """Unknown terms written as names (`content`)."""
    read: tuple[tuple[str, str, str], ...] = ()
    """(as written, the word it was read as, its term) for each word no note holds that
    was read as a slip of an index word (kbase_ci.query.misspell; `reading`)."""
    aside: tuple[tuple[str, str], ...] = ()
    """(as written, term) of another language's words no note holds (`foreign`)."""
    text: str = ""
    """The query as asked (the vector ranker embeds it; a note's name is matched on it)."""
    letters: tuple[str, ...] = ()
    """The query's runs of letters, in order (`content`, `foreign`: its language)."""
    prefixes: tuple[str, ...] = ()
    """The words a snippet looks for, as prefixes (a stem's worth: "tasks" finds
    "task"), the question's frame ("what", "how", "my") left out unless nothing else is
    left (kbase_ci.query.snippets)."""
    ranked: tuple[str, ...] = ()
    """The terms BM25 sums, in query order (a repeated one counts again), then the terms
    of words read as slips (`read`) that the query does not hold already, sorted."""
    scale: dict[str, float] = json_field(default_factory=dict)
    """The weight in BM25 of the terms of words read as slips (`misspell.WEIGHT`)."""

    @classmethod
    def of(cls, query: str, index: Index) -> QueryTerms:
        """The terms of `query` over `index`, as the module docstring says: the only
        place a search cuts its query into words."""
        found = list(tokens.words(query))
        cut = [t for _, toks in found for t in toks]
        wide = index.question_stop
        stop = wide if any(t not in wide for t in cut) else index.stop
        ranked = tokens.stemmed(cut, stop, index.stemmer)
        written = tokens.written(found, stop, index.stemmer)
        terms = [t for _, t in written]
        total, idf = index.idf(terms)
        whole = cls.asked(query, tuple(written), idf, frozenset(index.unknown(terms)),
                          idf_of(total, 1))
        frame = frame_words(index.stemmer)
        q = whole.content(frame)
        read = misspell.read(q, index)
        q = q.reading(read, index.idf([t for *_, t in read])[1]).foreign(frame)
        more = {t: misspell.WEIGHT for *_, t in q.read if t not in ranked} \
            if misspell.WEIGHT and ranked else {}
        return q._replace(ranked=(*ranked, *sorted(more)), scale=more)

    @classmethod
    def asked(cls, query: str, written: tuple[tuple[str, str], ...], idf: dict[str, float],
              unknown: frozenset[str] = frozenset(), rare: float = 0.0) -> QueryTerms:
        """These terms of `query`, with what its text alone tells (`letters`, `prefixes`)."""
        words = [w.casefold() for w in _SNIPPET_WORD.findall(query)]
        content = [w for w in words if w not in _FRAME] or words
        return cls(written, idf, unknown, rare, text=query,
                   letters=tuple(_LETTERS.findall(query)),
                   prefixes=tuple(w[:max(4, len(w) - 2)] for w in content))

    @property
    def terms(self) -> list[str]:
        return [t for _, t in self.written]

    @property
    def mass(self) -> float:
        return sum(self.idf.get(t, 0.0) for t in self.terms)

    def coverage(self, matched: Iterable[str]) -> float:
        """The share of the query's IDF mass in `matched` (a word no note holds weighs as
        the rarest, once: paraphrases use words the vault never says)."""
        total = self.mass
        return sum(self.idf.get(t, 0.0) for t in set(matched)) / total if total > 0 else 0.0

    def words(self, terms: Iterable[str]) -> list[str]:
        have = set(terms)
        return [w for w, t in self.written if t in have]

    def content(self, frame: frozenset[str]) -> QueryTerms:
        """The terms evidence is judged on: without the question's frame words (`frame`,
        kbase_ci.query.framewords; all of them when nothing else is left), nor a compound
        no chunk holds whose parts are terms too (`right-to-left`, `run-up`: its parts
        speak for it). `names`: the unknown terms written as a name, what a question about
        a thing the vault never mentions names: a capital past a word's first letter or a
        digit (`WebDAV`, `PlantUML`, `HDR10`), or a capital first letter anywhere but at
        the query's start in a question written in English (`Todoist` in "import my
        to-dos from Todoist"; not `Seitenleiste` in "Backlinks Seitenleiste anzeigen",
        where German writes every noun so): at least half of its words in lower case,
        and one at least, are frame words or words a note holds (stopwords included)."""
        kept = tuple((w, t) for w, t in self.written if w.lower() not in frame
                     and not (t in self.unknown and _compound(w)))
        if not kept:
            kept = tuple((w, t) for w, t in self.written
                         if not (t in self.unknown and _compound(w))) or self.written
        first = self.text.lstrip()
        strange = {w.lower() for w, t in self.written if t in self.unknown}
        prose = _english(self.letters, frame, strange)
        names = frozenset(t for w, t in kept if t in self.unknown and _named(w, first, prose))
        terms = {t for _, t in kept}
        return self._replace(written=kept, unknown=self.unknown & terms, names=names)

    def foreign(self, frame: frozenset[str]) -> QueryTerms:
        """These terms, in a question in another language (lower-case words, fewer than
        half of them frame words or words a note holds, `read` ones included) without
        its words no note holds that are not names: another language's words are
        neither missing nor matched, as frame words, and the vault is judged on the words
        it has ("Backlinks Seitenleiste anzeigen"), while one is left to judge by."""
        strange = {w.lower() for w, t in self.written if t in self.unknown}
        if _english(self.letters, frame, strange) is not False or \
                all(t in self.unknown for _, t in self.written):
            return self
        kept = tuple((w, t) for w, t in self.written
                     if t not in self.unknown or t in self.names)
        return self._replace(written=kept, unknown=self.unknown & {t for _, t in kept},
                             aside=tuple(p for p in self.written if p not in kept))

    def reading(self, read: Sequence[tuple[str, str, str]], idf: dict[str, float]
                ) -> QueryTerms:
        """These terms with each word of `read` (as written, read as, term: kbase_ci.query.
        misspell) counted as its term, whose IDF `idf` gives: no longer unknown; a word read
        as a term the query holds already is left out (that term speaks for it)."""
        if not read:
            return self
        to = {w: t for w, _, t in read}
        have = {t for _, t in self.written}
        written = tuple((w, to.get(w, t)) for w, t in self.written
                        if w not in to or to[w] not in have)
        gone = {t for w, t in self.written if w in to}
        return self._replace(written=written, idf={**self.idf, **idf},
                             unknown=self.unknown - gone, names=self.names - gone,
                             read=tuple(read))


def _compound(word: str) -> bool:
    """Words joined by `-`, `_`, `.`, `/` or `::` (written as one, `PlantUML` is a name)."""
    return _JOINED.search(word) is not None and len(tokens.split(word)) > 1


def _english(letters: Sequence[str], frame: frozenset[str], strange: set[str]) -> bool | None:
    """Whether a query of these runs of `letters` reads as English prose: at least half of
    its lower-case words are frame words or not `strange` (words no note holds, as
    written); None when it has no lower-case word to tell by."""
    lower = [w for w in letters if w[:1].islower()]
    if not lower:
        return None
    return 2 * sum(1 for w in lower if w in frame or w not in strange) >= len(lower)


def _named(word: str, start: str, english: bool | None) -> bool:
    """Whether `word` is written as a name, in a query beginning with `start`."""
    return any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:]) or \
        (english is True and word[:1].isupper() and not start.startswith(word))

