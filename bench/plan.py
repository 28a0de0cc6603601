"""What the synthetic vault will contain, decided before any text is written.

Links need their targets' headings and block ids up front, so every note's name, folder,
size, headings and block ids are drawn here; `render` only turns the plan into text.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import date, timedelta

from .vocab import (
    DOMAINS,
    DUP_NAMES,
    H3_TITLES,
    KINDS,
    QUALIFIERS,
    SECTION_TITLES,
    SUFFIXES,
    UNICODE_WORDS,
)

MEAN_NOTE_BYTES = 3800
MEAN_LINKS = 5.4  # random body links per regular note; `up`, MOCs and See Also add the rest
FIRST_DAY = date(2015, 1, 1)
BLOCK_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass(slots=True)
class Note:
    folder: str
    name: str
    kind: str  # home | folder | daily | regular
    domain: int = -1
    size: int = 0
    n_links: int = 0
    unique: bool = True
    headings: list[tuple[int, str, str]] = field(default_factory=list)  # level, text, h2
    blocks: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    up: str = ""
    day: date | None = None

    @property
    def stem(self) -> str:
        return f"{self.folder}/{self.name}" if self.folder else self.name

    @property
    def ref(self) -> str:
        """How a wikilink names this note: the basename unless another note shares it."""
        return self.name if self.unique else self.stem


@dataclass(frozen=True, slots=True)
class Plan:
    notes: list[Note]
    taken: frozenset[str]
    """Casefolded note names and aliases; generated dangling targets avoid them."""


def slug(text: str) -> str:
    return "-".join(text.lower().split())


def lognormal(rng: random.Random, mean: float, sigma: float) -> float:
    return rng.lognormvariate(math.log(mean) - sigma * sigma / 2, sigma)


class Planner:
    def __init__(self, rng: random.Random, total: int) -> None:
        self.rng = rng
        self.total = total
        self.taken: set[str] = set()
        self.notes: list[Note] = []

    def plan(self) -> Plan:
        rng = self.rng
        n_domains = min(len(DOMAINS), max(3, self.total // 25))
        self._add(Note("", "Home", "home", headings=[(2, "Areas", ""), (2, "Recent", "")]))
        for d, (top, subs, _) in enumerate(DOMAINS[:n_domains]):
            self._add(self._folder_note(top, top, d, "Home"))
            for sub in subs:
                self._add(self._folder_note(f"{top}/{sub}", sub, d, top))
        for d, (top, _, _) in enumerate(DOMAINS[:n_domains]):
            for dup in DUP_NAMES:
                self._add(self._regular(top, d, dup, unique=False))
        n_daily = max(3, round(self.total * 0.08))
        n_regular = self.total - len(self.notes) - n_daily
        weights = [1 / math.sqrt(i + 1) for i in range(n_domains)]
        for _ in range(n_regular):
            d = rng.choices(range(n_domains), weights)[0]
            top, subs, subjects = DOMAINS[d]
            folder = top if rng.random() < 0.45 else f"{top}/{rng.choice(subs)}"
            self._add(self._regular(folder, d, self._name(subjects)))
        span = max(3650, 2 * n_daily)
        for offset in sorted(rng.sample(range(span), n_daily)):
            self._add(self._daily(FIRST_DAY + timedelta(days=offset)))
        return Plan(self.notes, frozenset(self.taken))

    def _add(self, note: Note) -> None:
        self.notes.append(note)
        self.taken.add(note.name.casefold())

    def _name(self, subjects: tuple[str, ...]) -> str:
        rng = self.rng
        name = ""
        for _ in range(40):
            subject, r = rng.choice(subjects), rng.random()
            if r < 0.006:
                name = f"{rng.choice(UNICODE_WORDS)} {subject}"
            elif r < 0.35:
                name = f"{subject} {rng.choice(KINDS)}"
            elif r < 0.55:
                name = f"{rng.choice(QUALIFIERS)} {subject}"
            else:
                name = f"{rng.choice(QUALIFIERS)} {subject} {rng.choice(KINDS)}"
            if name.casefold() not in self.taken:
                return name
        n = 2  # the name space is nearly used up: number the repeats, as people do
        while f"{name} {n}".casefold() in self.taken:
            n += 1
        return f"{name} {n}"

    def _folder_note(self, folder: str, name: str, domain: int, up: str) -> Note:
        tags = [slug(DOMAINS[domain][0]), "type/moc"]
        return Note(folder, name, "folder", domain, size=800, up=up, tags=tags,
                    headings=[(2, "Contents", ""), (2, "Start Here", "")])

    def _regular(self, folder: str, domain: int, name: str, *, unique: bool = True) -> Note:
        rng = self.rng
        size = int(min(40_000, max(700, lognormal(rng, MEAN_NOTE_BYTES, 0.6))))
        n_links = round(lognormal(rng, MEAN_LINKS, 0.8) * math.sqrt(size / MEAN_NOTE_BYTES))
        note = Note(folder, name, "regular", domain, size, n_links, unique)
        subjects = DOMAINS[domain][2]
        seen = {name.casefold(), "see also"}

        def pick(titles: tuple[str, ...]) -> str:
            for _ in range(8):
                text = (rng.choice(titles) if rng.random() < 0.7
                        else f"{rng.choice(subjects)} {rng.choice(SUFFIXES)}")
                if text.casefold() not in seen:
                    seen.add(text.casefold())
                    return text
            return ""

        for _ in range(max(1, min(9, size // 900 + rng.randint(-1, 1)))):
            h2 = pick(SECTION_TITLES)
            if not h2:
                continue
            note.headings.append((2, h2, ""))
            for _ in range(rng.choice((0, 0, 0, 1, 1, 2))):
                h3 = pick(H3_TITLES)
                if h3:
                    note.headings.append((3, h3, h2))
                    if rng.random() < 0.12 and f"{h3} details".casefold() not in seen:
                        seen.add(f"{h3} details".casefold())
                        note.headings.append((4, f"{h3} Details", h2))
        if rng.random() < 0.3:
            note.blocks = self._block_ids(rng.randint(1, 3))
        if rng.random() < 0.2:
            words = name.split()
            for alias in (name.lower(), "".join(w[0] for w in words).upper()):
                if len(alias) > 2 and alias.casefold() not in self.taken:
                    self.taken.add(alias.casefold())
                    note.aliases.append(alias)
        extra = ["status/draft", "status/evergreen", "status/review",
                 "topic/" + slug(rng.choice(subjects)), "needs-links", "reference"]
        note.tags = [slug(folder), *rng.sample(extra, rng.randint(0, 2))]
        if rng.random() < 0.6:
            note.up = DOMAINS[domain][0] if "/" not in folder else folder.rsplit("/", 1)[1]
        return note

    def _daily(self, day: date) -> Note:
        rng = self.rng
        size = int(min(6000, max(300, lognormal(rng, 1500, 0.5))))
        note = Note(f"Journal/{day.year}", day.isoformat(), "daily", -1, size,
                    round(lognormal(rng, 3, 0.6)), day=day, tags=["daily"],
                    headings=[(2, "Log", ""), (2, "Tasks", ""), (2, "Notes", "")])
        if rng.random() < 0.05:
            note.blocks = self._block_ids(1)
        return note

    def _block_ids(self, n: int) -> list[str]:
        rng, ids = self.rng, list[str]()
        while len(ids) < n:
            if rng.random() < 0.8:
                bid = "".join(rng.choices(BLOCK_ALPHABET, k=6))
            else:
                bid = rng.choice(("key-decision", "summary", "definition", "todo", "quote"))
            if bid not in ids:
                ids.append(bid)
        return ids
