"""BM25 tokens: words, plus the parts of code identifiers, stemmed with PyStemmer.

`contextlib.contextmanager` is one token *and* `contextlib`, `contextmanager`; likewise
`snake_case` -> `snake`, `case` and `camelCase` -> `camel`, `case`, so a search for either
the whole identifier or one of its words finds it. In code (inline spans and fenced
blocks) an identifier inside a compound is kept whole too: `this.registerEvent(...)`
gives `registerevent` besides `register` and `event`, as `registerEvent` alone does, so
API names asked by name match the code that calls them. Queries must go through the
very same function, so the settings that define it are stored in the manifest (bm25s
saves none of them) and bumping `VERSION` invalidates every shard.

Markdown emphasis inside a word is dropped first (`plain`): `**T**ranslation
**L**ookaside **B**uffer` reads as `Translation Lookaside Buffer`, not `T ranslation L
ookaside B uffer`. Only `*` runs: CommonMark allows emphasis inside a word with `*` alone
(`snake_case` is no emphasis), and code (backtick spans, fences) is left as written.
Version 2: emphasis stripped (version 1 split `**T**ranslation` into `t`, `ranslat`).
Version 3: in code, identifiers inside compounds kept whole (version 2 had
`this.registerevent`, `this`, `register`, `event`, and no `registerevent`: an API
reference's own names were missing words; issue 37).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from itertools import chain
from typing import Any

from kbase_ci.errors import IndexFormatError

VERSION = 3
STEMMER = "english"
"""The default stemmer (`index.stemmer`); `none` keeps words as written."""
MIN_LENGTH = 2

# A word, or words joined by `.`, `::`, `/`, `-` or `_` with no space: one identifier.
_COMPOUND = re.compile(r"\w+(?:(?:::|[./-])\w+)*")
_MEMBERS = re.compile(r"::|[./-]+")
"""What joins identifiers into one compound (`_` joins the words of one identifier)."""
# camelCase / PascalCase / HTTPServer / utf8Decode boundaries (ASCII identifiers only).
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# An emphasis span (`*`, `**` or `***` around text without spaces) touching a word
# character outside it: `**T**ranslation`, `data*base*`.
_IN_WORD = re.compile(r"(?<=\w)(\*{1,3})([^\s*]+)\1|(\*{1,3})([^\s*]+)\3(?=\w)")


def plain(text: str) -> str:
    """`text` without the emphasis marks inside its words (see the module docstring);
    backtick code spans and fences as they are."""
    if "*" not in text:
        return text
    parts = text.split("`")
    # Even pieces are outside code: a fence's three backticks and a span's one both
    # leave the code at odd positions.
    for i in range(0, len(parts), 2):
        if "*" in parts[i]:
            parts[i] = _IN_WORD.sub(_unmark, parts[i])
    return "`".join(parts)


def _unmark(m: re.Match[str]) -> str:
    return m.group(2) if m.group(1) is not None else m.group(4)


def settings(stemmer: str = STEMMER) -> dict[str, Any]:
    """What a query needs to tokenize exactly as the index did (goes into the manifest)."""
    return {
        "name": "kbase-code",
        "version": VERSION,
        "lower": True,
        "min_length": MIN_LENGTH,
        "compound_separators": [".", "::", "/", "-", "_"],
        "camel_case_parts": True,
        "stemmer": stemmer,
        "stemmer_library": "PyStemmer",
        "stopwords": list(stopwords()),
    }


def _expand(word: str, code: bool = False) -> tuple[str, ...]:
    """The tokens of one compound: itself (lowercased), then its parts, in order; in
    `code`, each identifier of it (the parts between `.`, `::`, `/` and `-`) that has
    parts of its own comes whole before them (`registerEvent` of `this.registerEvent`,
    `path_join` of `os.path_join`)."""
    low = word.lower()
    if low == word and word.isalnum():  # the usual case: a plain lowercase word
        return (word,) if len(word) >= MIN_LENGTH else ()
    out = [low] if len(low) >= MIN_LENGTH else []
    for ident in _MEMBERS.split(word):
        parts = _parts(ident)
        whole = ident.lower()
        if code and len(parts) > 1 and whole != low and len(whole) >= MIN_LENGTH:
            out.append(whole)
        out.extend(p for p in parts if len(p) >= MIN_LENGTH and p != low)
    return tuple(out)


def _parts(ident: str) -> list[str]:
    """The words of one identifier: its `_`-separated pieces, camelCase split."""
    parts: list[str] = []
    for piece in ident.split("_"):
        if not piece:
            continue
        if piece.isascii() and not piece.islower() and not piece.isupper():
            parts.extend(m.lower() for m in _CAMEL.findall(piece))
        else:
            parts.append(piece.lower())
    return parts


class _Memo(dict[str, tuple[str, ...]]):
    """word -> tokens; words repeat endlessly, so lookups stay in C after the first."""

    def __init__(self, code: bool) -> None:
        super().__init__()
        self.code = code

    def __missing__(self, word: str) -> tuple[str, ...]:
        if len(self) > _MEMO_MAX:
            self.clear()
        got = self[word] = _expand(word, self.code)
        return got


_MEMO_MAX = 500_000
_memo = _Memo(code=False)
_code_memo = _Memo(code=True)


def words(text: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(compound, its tokens) of `text` in order: backtick code (inline spans, fences)
    keeps its identifiers whole too, prose does not (a link target such as
    `Vault/appendBinary` is no identifier anyone asks for, and its extra token moved
    API pages' BM25 lengths: on obsidian-developer-docs it cost verbatim questions)."""
    text = plain(text)
    if "`" not in text:  # the usual case: no code
        for word in _COMPOUND.findall(text):
            yield word, _memo[word]
        return
    # Odd pieces are code: a fence's three backticks and a span's one both leave the
    # code at odd positions.
    for i, piece in enumerate(text.split("`")):
        memo = _code_memo if i % 2 else _memo
        for word in _COMPOUND.findall(piece):
            yield word, memo[word]


def split(text: str) -> list[str]:
    """Unstemmed tokens of `text`; the `splitter` given to bm25s's Tokenizer."""
    if "`" not in text:  # the usual case, in C: no code
        return list(chain.from_iterable(map(_memo.__getitem__,
                                            _COMPOUND.findall(plain(text)))))
    return [tok for _, toks in words(text) for tok in toks]


def make_tokenizer(stemmer: str = STEMMER) -> Any:
    """A fresh bm25s Tokenizer: vocabulary ids follow first appearance in the corpus, so
    the same documents in the same order give the same ids whatever the hash seed."""
    import bm25s.tokenization as bt

    return bt.Tokenizer(lower=False, splitter=split, stopwords=list(stopwords()),
                        stemmer=_stemmer_object(stemmer))


def _stemmer_object(name: str) -> Any:
    if name == "none":
        return None
    import Stemmer

    try:
        return Stemmer.Stemmer(name)
    except KeyError:  # an index naming a stemmer this PyStemmer lacks

        raise IndexFormatError(f"the index was built with the stemmer {name!r}, which "
                               "this kbase cannot use: upgrade kbase") from None


@cache
def stemmer(name: str = STEMMER) -> Callable[[str], str]:
    """The stem function of `name` (one Stemmer per process: making one costs more than
    stemming a query)."""
    got = _stemmer_object(name)
    if got is None:
        return str
    stem: Callable[[str], str] = got.stemWord
    return stem


def stopwords() -> tuple[str, ...]:
    """bm25s's English list; stored in full in the manifest in case bm25s changes it."""
    from bm25s.stopwords import STOPWORDS_EN

    return tuple(STOPWORDS_EN)


QUESTION_WORDS: dict[str, tuple[str, ...]] = {
    "english": (
        "what", "why", "how", "when", "where", "which", "who", "whom", "whose", "does",
        "do", "did", "doing", "done", "i", "me", "my", "mine", "myself", "we", "us", "our",
        "you", "your", "can", "could", "should", "would", "might", "must", "shall", "may",
        "each", "every", "before", "also", "just", "very", "really", "want", "need",
        "anything", "something", "someone", "there", "here"),
}
"""Words of a question's frame, per stemmer language: stopwords at query time only (the
index keeps them). In a question they are the frame, not the topic: at paragraph grain
"what", "why", "does", "my" get IDF 3-5.5 and can carry a third of a question's IDF
mass, so a note holding every content word looked like half an answer. A language
without a list here gets none (its index's own stopwords still apply)."""


def query_stopwords(stop: tuple[str, ...] | list[str], stem_with: str) -> frozenset[str]:
    """The index's stopwords and the question words of its stemmer's language."""
    return frozenset(stop).union(QUESTION_WORDS.get(stem_with, ()))


def query_terms(text: str, stop: tuple[str, ...] | list[str] | None = None,
                stem_with: str = STEMMER) -> list[str]:
    """Stemmed terms of a query, stopwords removed: look these up in a shard's vocabulary.
    Pass the manifest's `tokenizer.stopwords` and `tokenizer.stemmer` to match the index."""
    return stemmed(split(text), stop, stem_with)


def stemmed(found: Iterable[str], stop: Iterable[str] | None = None,
            stem_with: str = STEMMER) -> list[str]:
    """The terms of tokens `found` (`split`), stopwords removed, in order."""
    stop_set = set(stopwords() if stop is None else stop)
    stem = stemmer(stem_with)
    return [stem(t) for t in found if t not in stop_set]


def written_terms(text: str, stop: tuple[str, ...] | list[str] | None = None,
                  stem_with: str = STEMMER) -> list[tuple[str, str]]:
    """(as written, term) for each distinct term of `query_terms(text)`, in order of first
    appearance: the words an answer can name back to whoever asked (`kbase_ci.query.
    evidence`). A compound's part is given in the query's own case."""
    return written(words(text), stop, stem_with)


def written(found: Iterable[tuple[str, tuple[str, ...]]], stop: Iterable[str] | None = None,
            stem_with: str = STEMMER) -> list[tuple[str, str]]:
    """`written_terms` of the words `found` (`words`)."""
    stop_set = set(stopwords() if stop is None else stop)
    stem = stemmer(stem_with)
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for word, toks in found:
        low = word.lower()
        for tok in toks:
            if tok in stop_set:
                continue
            term = stem(tok)
            if term in seen:
                continue
            seen.add(term)
            at = low.find(tok)
            out.append((word if tok == low else word[at:at + len(tok)] if at >= 0 else tok,
                        term))
    return out
