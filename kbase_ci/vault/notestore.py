"""Every note of a vault: small summaries eagerly, full records only when asked for.

A hook checking one note of a 10k-note vault must not decode 10k cached records
(~0.6 s): resolution needs every note's *name* and *aliases*, but headings only of
the notes actually linked to. So the cache keeps a summary per note (aliases, tag
names, the names its links point at) next to the full record, and this store loads
summaries for all notes and full records lazily, in batches.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, overload

from kbase_ci.parse.outline import note_title
from kbase_ci.parsed import Link, ParsedNote


@dataclass(frozen=True, slots=True)
class NoteSummary:
    """What resolution and the checks need of a note the hook did not parse."""

    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    """Tag names as written (case preserved)."""
    targets: tuple[str, ...] = ()
    """Lower-cased link targets without `.md`, each also as its last path segment."""
    type: str = ""
    """Frontmatter `type:` when it is a string (note-type checks pick notes by it)."""


class LinkHints(Protocol):
    """Notes summarized from a published index, left unparsed
    (kbase_ci.vault.indexhints.HintedNotes): their summaries have no `targets`."""

    summaries: dict[str, NoteSummary]

    def linking_to(self, keys: Collection[str]) -> set[str]:
        """Those that may link to one of `keys` (folded target keys); never fewer."""

    def links(self, path: str, keys: Collection[str]) -> tuple[Link, ...] | None:
        """A note's links without parsing it, or None (parse it); never for a note with
        a suppression comment."""


@dataclass(frozen=True, slots=True)
class LinkedNote:
    """What the breakage search needs of a note it did not parse: its path and links."""

    path: str
    links: tuple[Link, ...]


def target_key(target: str) -> str:
    """Which link targets name the same thing: NFC, trimmed, lower-case, without `.md`
    (a broken link's gap, a deleted note's inbound links)."""
    key = unicodedata.normalize("NFC", target.strip()).lower()
    return key[:-3] if key.endswith(".md") else key


def fold(text: str) -> str:
    """A form in which a name is a substring of a link's raw text whenever the parser's
    target key of that link (or its last segment) is the name: case-folded and
    decomposed, and without backslashes, all character by character, so a substring
    stays one. Backslashes go because whether one is an escape depends on where the
    parser cut the link (`[x](<a\\%20\\>>)` targets `a \\`: the `\\>` is no escape there,
    though it is one in the text around it); dropping them from both sides can only
    find more notes, never fewer."""
    if text.isascii():  # the same, for a note's whole text: casefold is lower, NFD is none
        return text.lower().replace("\\", "")
    folded = unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).casefold())
    return folded.replace("\\", "")


def summarize(note: ParsedNote) -> NoteSummary:
    keys: dict[str, None] = {}
    for link in note.links:
        if link.external or not link.target:
            continue
        key = target_key(link.target)
        keys[key] = None
        keys[key.rsplit("/", 1)[-1]] = None
    return NoteSummary(
        aliases=note.aliases,
        tags=tuple(dict.fromkeys(t.name for t in note.tags)),
        targets=tuple(keys),
        type=note.frontmatter.get("type", "") if isinstance(note.frontmatter.get("type"), str)
        else "",
    )


Loader = Callable[[Sequence[str]], dict[str, ParsedNote]]
TagVariants = Callable[[set[str]], dict[str, Counter[str]]]
"""Lower-cased tags -> {tag: Counter(spelling -> notes)} (see `NoteStore.tag_variants`)."""


class NoteStore(Sequence[ParsedNote]):
    """State: summaries of all notes, and the full records loaded so far.

    Behaves as a sequence of ParsedNote in path order (iterating loads everything),
    so code written for a plain list keeps working; fast paths use the summaries.
    """

    def __init__(self, paths: Sequence[str], summaries: Mapping[str, NoteSummary],
                 loader: Loader, loaded: dict[str, ParsedNote] | None = None, *,
                 aliases: Callable[[], dict[str, tuple[str, ...]]] | None = None,
                 tag_variants: TagVariants | None = None,
                 hinted: LinkHints | None = None) -> None:
        """`summaries` may be lazy (a Mapping that queries the cache on first use);
        `aliases`, when given, answers `aliases()` without touching `summaries`, and
        `tag_variants` answers `tag_variants()` likewise."""
        self.paths: tuple[str, ...] = tuple(sorted(paths))
        self._summaries = summaries
        self._aliases = aliases
        self._tag_variants = tag_variants
        self._loader = loader
        self._hinted = hinted
        self._linked: dict[str, LinkedNote] = {}
        self._loaded: dict[str, ParsedNote] = dict(loaded or {})
        self._all: list[ParsedNote] | None = None

    @classmethod
    def from_notes(cls, notes: Iterable[ParsedNote]) -> NoteStore:
        by_path = {n.path: n for n in notes}
        # Summaries are made when asked for: a resolver over 10k notes needs only their
        # aliases, and summarizing every note cost ~0.1 s of an incremental build.
        return cls(list(by_path), _Summaries(by_path), lambda paths: {}, by_path,
                   aliases=lambda: {p: n.aliases for p, n in by_path.items() if n.aliases})

    # -- summaries (no record decoding) ------------------------------------------
    def summary(self, path: str) -> NoteSummary:
        return self._summaries.get(path) or NoteSummary()

    def aliases(self) -> dict[str, tuple[str, ...]]:
        if self._aliases is not None:
            return self._aliases()
        return {p: s.aliases for p, s in self._summaries.items() if s.aliases}

    def tag_variants(self, tags: Collection[str]) -> dict[str, Counter[str]]:
        """Lower-cased tag -> spelling -> how many notes use it, for those of `tags` that
        the notes spell in more than one way (`#Rust` and `#rust`)."""
        wanted = {t.lower() for t in tags}
        if not wanted:
            return {}
        if self._tag_variants is not None:
            return self._tag_variants(wanted)
        out: dict[str, Counter[str]] = {}
        for path in self.paths:
            for name in self.summary(path).tags:
                key = name.lower()
                if key in wanted:
                    out.setdefault(key, Counter())[name] += 1
        return {t: c for t, c in out.items() if len(c) > 1}

    def linking_to(self, keys: Iterable[str]) -> list[str]:
        """Paths of notes with a link whose target (or its last segment) is in `keys`
        (for notes summarized from an index: that may have one)."""
        wanted = {target_key(k) for k in keys}
        hinted = self._hinted
        maybe = hinted.linking_to(_folded(wanted)) if hinted is not None else set()
        skip = hinted.summaries if hinted is not None else {}
        return [p for p in self.paths
                if p in maybe or (p not in skip and not wanted.isdisjoint(
                    self.summary(p).targets))]

    def link_sources(self, paths: Iterable[str], keys: Iterable[str]
                     ) -> list[ParsedNote | LinkedNote]:
        """The notes of `paths` with their links, for a search of links whose target key
        is in `keys`: a note summarized from an index comes with the index's links
        when its text bears them out (`LinkHints.links`), every other note parsed."""
        paths = list(paths)
        hinted = self._hinted
        got: dict[str, ParsedNote | LinkedNote] = {}
        if hinted is not None:
            folded = _folded({target_key(k) for k in keys})
            for p in paths:
                if p in hinted.summaries and p not in self._loaded:
                    links = hinted.links(p, folded)
                    if links is not None:
                        got[p] = self._linked[p] = LinkedNote(p, links)
        got.update({n.path: n for n in self.load(p for p in paths if p not in got)})
        return [got[p] for p in paths if p in got]

    def suppressions_source(self, path: str) -> ParsedNote | None:
        """A record whose `suppressions` are note `path`'s, for weighing its findings: a
        note whose links came from an index (`link_sources`) has none (its text holds no
        `kbase-ignore`: `LinkHints.links`), so it is not parsed for them."""
        linked = self._linked.get(path)
        if linked is not None and path not in self._loaded:
            return ParsedNote(path, note_title(path), links=linked.links)
        return self.get(path)

    # -- full records -------------------------------------------------------------
    def get(self, path: str) -> ParsedNote | None:
        note = self._loaded.get(path)
        if note is None and path in self._summaries:
            self.load([path])
            note = self._loaded.get(path)
        return note

    def load(self, paths: Iterable[str]) -> list[ParsedNote]:
        wanted = [p for p in paths if p in self._summaries]
        missing = [p for p in wanted if p not in self._loaded]
        if missing:
            self._loaded.update(self._loader(missing))
        return [self._loaded[p] for p in wanted if p in self._loaded]

    def all(self) -> list[ParsedNote]:
        if self._all is None:
            self._all = self.load(self.paths)
        return self._all

    # -- Sequence protocol -----------------------------------------------------------
    def __len__(self) -> int:
        return len(self.paths)

    def __iter__(self) -> Iterator[ParsedNote]:
        return iter(self.all())

    @overload
    def __getitem__(self, i: int) -> ParsedNote: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[ParsedNote]: ...
    def __getitem__(self, i: int | slice) -> ParsedNote | Sequence[ParsedNote]:
        return self.all()[i]

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str):
            return item in self._summaries
        return isinstance(item, ParsedNote) and item.path in self._summaries


def _folded(keys: Iterable[str]) -> list[str]:
    """Target keys folded (`fold`); one of backslashes only folds to "", which names
    anything (`indexhints.names_in`)."""
    return list(dict.fromkeys(fold(w) for w in keys if w))


class LazySummaries(Mapping[str, NoteSummary]):
    """Summaries keyed by path, fetched from the cache only when needed.

    Membership is known up front (which notes are cached). The first few lookups
    are point queries (`fetch_some`: a hook asks about its one staged note); past
    `_POINT_LIMIT` distinct paths every row is read in one query, since a check that
    walks the vault (inbound breakage, note types) would otherwise query 10k times.
    """

    _POINT_LIMIT = 64

    def __init__(self, present: Iterable[str], fetch: Callable[[], dict[str, NoteSummary]],
                 extra: Mapping[str, NoteSummary],
                 fetch_some: Callable[[Sequence[str]], dict[str, NoteSummary]] | None = None
                 ) -> None:
        self._present = set(present) | set(extra)
        self._fetch = fetch
        self._fetch_some = fetch_some
        self._extra = dict(extra)
        self._rows: dict[str, NoteSummary] | None = None
        self._some: dict[str, NoteSummary] = {}

    def _all(self) -> dict[str, NoteSummary]:
        if self._rows is None:
            self._rows = {**self._fetch(), **self._extra}
        return self._rows

    def __getitem__(self, path: str) -> NoteSummary:
        if path not in self._present:
            raise KeyError(path)
        if path in self._extra:
            return self._extra[path]
        # A row that failed to decode reads as an empty summary; its record is re-parsed
        # when loaded, so nothing is lost but this hint.
        if self._rows is None and self._fetch_some is not None and \
                len(self._some) < self._POINT_LIMIT:
            if path not in self._some:
                self._some[path] = self._fetch_some([path]).get(path) or NoteSummary()
            return self._some[path]
        return self._all().get(path) or NoteSummary()

    def __contains__(self, path: object) -> bool:
        return path in self._present

    def __iter__(self) -> Iterator[str]:
        return iter(self._present)

    def __len__(self) -> int:
        return len(self._present)


class _Summaries(Mapping[str, NoteSummary]):
    """`summarize` of each note, computed on first access (state: those made so far)."""

    def __init__(self, notes: Mapping[str, ParsedNote]) -> None:
        self._notes = notes
        self._made: dict[str, NoteSummary] = {}

    def __getitem__(self, path: str) -> NoteSummary:
        got = self._made.get(path)
        if got is None:
            got = self._made[path] = summarize(self._notes[path])
        return got

    def __contains__(self, path: object) -> bool:
        return path in self._notes

    def __iter__(self) -> Iterator[str]:
        return iter(self._notes)

    def __len__(self) -> int:
        return len(self._notes)
