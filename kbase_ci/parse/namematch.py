"""Whole-word mentions of note names (titles and aliases) in a note's prose: what
Obsidian's "unlinked mentions" panel finds, for every note of a vault in one pass.

A name is cut into words (`\\w+`, Unicode) and what lies between them; a mention is the
same words, case-insensitively (casefolded, NFC), with the same separators, where a
space of the name stands for one run of blanks holding at most one line break (a name
wrapped over two lines still counts). Words are whole: `Docker` is not found in
`Dockerfile`, but is in `Docker's` and `docker-compose` (as `\\b` would).

Only prose is searched (`kbase_ci.parse.prosemask`): not frontmatter, code, links,
embeds, URLs, HTML or comments.

All names are found by one walk over the text's words with a dict from each name's first
word to the names starting with it (not one regex per name: titles x notes scans).

Names never looked for, a fixed rule rather than a fitted threshold: names shorter than
`MIN_CHARS` characters ("Go", "R"), and names made only of function words and the words
vaults use to organise notes (`STOP`: "Index", "Notes", "Home", "To do"). Such names
would match nearly every note.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from kbase_ci.parse.prosemask import prose

T = TypeVar("T")
_Named = tuple["Name", tuple[T, ...]]
_Start = tuple[list[_Named[T]], list[str], dict[tuple[str, str], list[_Named[T]]]]

VERSION = 1
"""Bump whenever the hits for some text change: it keys `mentions.jsonl`."""
MAX_PLACES = 5
"""Places kept per (note, note naming it): the count says how many there are."""
MIN_CHARS = 3
STOP = frozenset((
    # function words
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any",
    "are", "as", "at", "be", "because", "been", "before", "being", "below", "between",
    "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during",
    "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her",
    "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its",
    "itself", "just", "me", "more", "most", "my", "no", "nor", "not", "now", "of", "off",
    "on", "once", "only", "or", "other", "our", "out", "over", "own", "same", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
    "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
    "why", "will", "with", "would", "you", "your",
    # words vaults organise notes with
    "index", "indexes", "home", "inbox", "readme", "notes", "note", "todo", "todos",
    "untitled", "draft", "drafts", "misc", "moc", "template", "templates", "daily",
    "journal", "archive", "start", "contents", "toc",
))
_WORD = re.compile(r"\w+")
_BLANKS = re.compile(r"[^\S\n]*\n?[^\S\n]*")


def _fold(word: str) -> str:
    return word.casefold() if word.isascii() else \
        unicodedata.normalize("NFC", word).casefold()


@dataclass(frozen=True, slots=True)
class Name:
    """A name cut for matching: its words, the separators between them (" ": blanks),
    and what comes before the first word and after the last ("C++": "++")."""

    words: tuple[str, ...]
    seps: tuple[str, ...]
    lead: str
    trail: str


def cut(name: str) -> Name | None:
    """`name` cut for matching, or None when it is never looked for (see the module)."""
    name = unicodedata.normalize("NFC", " ".join(name.split())).casefold()
    found = list(_WORD.finditer(name))
    if not found or len(name) < MIN_CHARS:
        return None
    words = tuple(m.group() for m in found)
    if all(w in STOP for w in words):
        return None
    seps = tuple(name[a.end():b.start()] for a, b in itertools.pairwise(found))
    return Name(words, seps, name[:found[0].start()], name[found[-1].end():])


@dataclass(frozen=True, slots=True)
class Hit(Generic[T]):
    """One mention: whose name (`target`), where (1-based line and column, code points),
    and the text as written (`length` code points from there, a line break included)."""

    target: T
    line: int
    col: int
    offset: int
    length: int


class Matcher(Generic[T]):
    """Every name of `names` (name -> the targets it names), found in texts."""

    def __init__(self, names: Mapping[str, Iterable[T]]) -> None:
        by_cut: dict[Name, list[T]] = {}
        self.skipped: list[str] = []
        """The names never looked for (sorted)."""
        for name in sorted(names):
            c = cut(name)
            if c is None:
                self.skipped.append(name)
            else:
                got = by_cut.setdefault(c, [])
                got.extend(t for t in names[name] if t not in got)
        # First word -> the one-word names, the separators after it, and the longer
        # names by (separator, second word): "Magic" starts 30 spell names of an SRD,
        # and trying each at every "magic" was most of the time.
        self._first: dict[str, _Start[T]] = {}
        for c in sorted(by_cut, key=lambda c: (c.words, c.seps, c.lead, c.trail)):
            start = self._first.setdefault(c.words[0], ([], [], {}))
            if len(c.words) == 1:
                start[0].append((c, tuple(by_cut[c])))
                continue
            if c.seps[0] not in start[1]:
                start[1].append(c.seps[0])
            start[2].setdefault((c.seps[0], c.words[1]), []).append((c, tuple(by_cut[c])))

    def __bool__(self) -> bool:
        return bool(self._first)

    def find(self, text: str) -> list[Hit[T]]:
        """The mentions in `text`, by position then target (one per target and place).
        Lines are `split_lines`' (`\r\n` and `\r` end a line too); offsets are in the
        text with its line ends made `\n`."""
        if not self._first:
            return []
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        shown = prose(text)
        first = self._first
        spans: list[tuple[int, int, T]] = []
        seen: set[tuple[int, T]] = set()
        # Fold the text once when that keeps every offset and gives NFC words (nearly
        # always): folding each of 400k words took a third of the time.
        folded = shown.casefold()
        fast = len(folded) == len(shown) and unicodedata.is_normalized("NFC", folded)
        for m in _WORD.finditer(folded if fast else shown):
            got = first.get(m.group() if fast else _fold(m.group()))
            if got is None:
                continue
            names, seps, longer = got
            if seps:
                names = list(names)
                for sep in seps:
                    pos = _after(sep, text, m.end())
                    w = _WORD.match(shown, pos) if pos >= 0 else None
                    if w is not None:
                        names += longer.get((sep, _fold(w.group())), ())
            for name, targets in names:
                end = _extend(name, text, shown, m.start(), m.end())
                if end < 0:
                    continue
                start = m.start() - len(name.lead)
                for t in targets:
                    if (start, t) not in seen:
                        seen.add((start, t))
                        spans.append((start, end, t))
        if not spans:
            return []
        starts = [0, *(m.end() for m in re.finditer("\n", text))]
        out = []
        for start, end, t in spans:
            row = bisect_right(starts, start) - 1
            out.append(Hit(t, row + 1, start - starts[row] + 1, start, end - start))
        return out


def _after(sep: str, text: str, end: int) -> int:
    """Where the word after separator `sep` (of a name) starts in `text`, the last word
    ending at `end`; -1: the text has another separator there."""
    if sep == " ":
        gap = _BLANKS.match(text, end)
        pos = gap.end() if gap else end
        return -1 if pos == end else pos
    return end + len(sep) if text[end:end + len(sep)].casefold() == sep else -1


def _extend(name: Name, text: str, shown: str, start: int, end: int) -> int:
    """Where the mention of `name` whose first word is `shown[start:end]` ends, or -1.
    Words are read in `shown` (prose only), separators in `text` (a blanked link between
    two words is no space)."""
    if name.lead and text[max(start - len(name.lead), 0):start].casefold() != name.lead:
        return -1
    for sep, word in zip(name.seps, name.words[1:], strict=True):
        pos = _after(sep, text, end)
        if pos < 0:
            return -1
        m = _WORD.match(shown, pos)
        if m is None or _fold(m.group()) != word:
            return -1
        end = m.end()
    if name.trail:
        if text[end:end + len(name.trail)].casefold() != name.trail:
            return -1
        end += len(name.trail)
        if end < len(shown) and (shown[end].isalnum() or shown[end] == "_"):
            return -1
    return end
