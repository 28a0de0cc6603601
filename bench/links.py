"""Link text for the synthetic vault: who links to whom, in which syntax, and what breaks.

Targets mix a Zipf draw over a shuffled popularity order (a few hubs with hundreds of
backlinks), a same-domain draw and a uniform draw. Every `BROKEN_EVERY`-th random link is
broken on purpose, cycling through four kinds of breakage.
"""

from __future__ import annotations

import random
from bisect import bisect
from datetime import datetime, timedelta
from itertools import accumulate
from urllib.parse import quote

from .plan import Note, Plan, slug
from .vocab import CONTENT_WORDS, DOMAINS, KINDS, MISSING_HEADINGS, QUALIFIERS

BROKEN_EVERY = 200  # 0.5% of random body links
ZIPF_EXPONENT = 0.8
ATTACH_DIR = "attachments"
KINDS_OF_LINK = ("plain", "alias", "path", "heading", "block", "embed", "image", "markdown",
                 "self")
KIND_CUM = tuple(accumulate((42, 14, 9, 12, 4, 3, 4, 9, 3)))
BROKEN_KINDS = ("ghost", "heading", "block", "markdown")
FIRST_PASTE = datetime(2021, 1, 1, 8, 0, 0)


class LinkMaker:
    def __init__(self, rng: random.Random, plan: Plan) -> None:
        self.rng = rng
        self.notes = plan.notes
        self.taken = set(plan.taken)
        n = len(self.notes)
        # Daily notes rank last: hubs are topic notes, not one day of the journal.
        self.popular = [i for i, note in enumerate(self.notes) if note.kind != "daily"]
        rng.shuffle(self.popular)
        self.popular += [i for i, note in enumerate(self.notes) if note.kind == "daily"]
        self.zipf_cum = list(accumulate(1 / (r + 1) ** ZIPF_EXPONENT for r in range(n)))
        self.by_domain: dict[int, list[int]] = {}
        # Notes under each folder (root "" holds all): targets for downward Markdown links.
        self.subtree: dict[str, list[int]] = {}
        for i, note in enumerate(self.notes):
            self.by_domain.setdefault(note.domain, []).append(i)
            parts = note.folder.split("/") if note.folder else []
            for depth in range(len(parts) + 1):
                self.subtree.setdefault("/".join(parts[:depth]), []).append(i)
        self.with_blocks = [i for i, note in enumerate(self.notes) if note.blocks]
        self.links = 0
        self.broken = 0
        self.seq = 0
        self.images: list[str] = []

    def pick(self, src: int) -> Note:
        rng = self.rng
        for _ in range(4):
            r = rng.random()
            if r < 0.45:
                pos = bisect(self.zipf_cum, rng.random() * self.zipf_cum[-1])
                i = self.popular[min(pos, len(self.popular) - 1)]
            elif r < 0.85 and self.notes[src].domain >= 0:
                i = rng.choice(self.by_domain[self.notes[src].domain])
            else:
                i = rng.randrange(len(self.notes))
            if i != src:
                return self.notes[i]
        return self.notes[(src + 1) % len(self.notes)]

    def alias_text(self, t: Note) -> str:
        rng = self.rng
        if t.aliases and rng.random() < 0.5:
            return rng.choice(t.aliases)
        if rng.random() < 0.5:
            return t.name.lower()
        return " ".join(rng.choices(CONTENT_WORDS, k=rng.randint(2, 3)))

    def counted(self, link: str) -> str:
        """A link written outside the random stream (frontmatter, MOC lists): always valid."""
        self.links += 1
        return link

    def random_links(self, src: int, n: int) -> list[str]:
        return [self._one(src) for _ in range(n)]

    def _one(self, src: int) -> str:
        rng, me = self.rng, self.notes[src]
        self.seq += 1
        self.links += 1
        if self.seq % BROKEN_EVERY == BROKEN_EVERY // 2:
            return self._broken(src)
        kind = KINDS_OF_LINK[bisect(KIND_CUM, rng.random() * KIND_CUM[-1])]
        if kind == "self" and me.headings:
            return f"[[#{rng.choice(me.headings)[1]}]]"
        if kind == "image":
            return self._image(me)
        if kind == "block" and self.with_blocks:
            t = self.pick(src)
            if not t.blocks or t is me:
                t = self.notes[rng.choice(self.with_blocks)]
            tail = f"|{self.alias_text(t)}" if rng.random() < 0.2 else ""
            return f"[[{t.ref}#^{rng.choice(t.blocks)}{tail}]]"
        if kind == "markdown":
            folder = me.folder
            pool = self.subtree[folder]
            if len(pool) > 1:
                t = self.notes[rng.choice(pool)]
                if t is not me:
                    rel = t.stem[len(folder) + 1:] if folder else t.stem
                    dest = f"<{rel}.md>" if rng.random() < 0.2 else quote(f"{rel}.md", safe="/")
                    text = self.alias_text(t) if rng.random() < 0.5 else t.name
                    return f"[{text}]({dest})"
        t = self.pick(src)
        if kind == "heading" and t.headings:
            level, text, parent = rng.choice(t.headings)
            anchor = f"{parent}#{text}" if level > 2 and rng.random() < 0.35 else text
            tail = f"|{self.alias_text(t)}" if rng.random() < 0.25 else ""
            return f"[[{t.ref}#{anchor}{tail}]]"
        if kind == "embed":
            h2s = [h for lvl, h, _ in t.headings if lvl == 2]
            anchor = f"#{rng.choice(h2s)}" if h2s and rng.random() < 0.25 else ""
            return f"![[{t.ref}{anchor}]]"
        if kind == "alias":
            return f"[[{t.ref}|{self.alias_text(t)}]]"
        if kind == "path":
            tail = f"|{self.alias_text(t)}" if rng.random() < 0.3 else ""
            return f"[[{t.stem}{tail}]]"
        return f"[[{t.ref}]]"

    def _image(self, me: Note) -> str:
        rng = self.rng
        if self.images and rng.random() < 0.2:
            name = rng.choice(self.images)
        else:
            k = len(self.images)
            if rng.random() < 0.6:
                stamp = FIRST_PASTE + timedelta(seconds=k * 3607 + rng.randrange(3600))
                name = f"Pasted image {stamp:%Y%m%d%H%M%S}.png"
            else:
                kind = rng.choice(("diagram", "screenshot", "chart", "sketch"))
                name = f"{slug(me.name)}-{kind}-{k}.png"
            self.images.append(name)
        r = rng.random()
        if r < 0.15:
            return f"![[{name}|{rng.choice((240, 400, 640))}]]"
        if r < 0.3:
            return f"![[{ATTACH_DIR}/{name}]]"
        return f"![[{name}]]"

    def orphan_images(self) -> None:
        """Attachments nothing embeds, as every real vault has."""
        for k in range(len(self.images) // 40 + 1):
            self.images.append(f"unused-export-{k}.png")

    def _broken(self, src: int) -> str:
        rng = self.rng
        kind = BROKEN_KINDS[self.broken % len(BROKEN_KINDS)]
        self.broken += 1
        t = self.pick(src)
        if kind == "heading":
            return f"[[{t.ref}#{rng.choice(MISSING_HEADINGS)}]]"
        if kind == "block":
            bid = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=6))
            while bid in t.blocks:
                bid += "x"
            return f"[[{t.ref}#^{bid}]]"
        ghost = self._ghost_name()
        if kind == "markdown":
            return f"[{ghost.lower()}]({quote(ghost + '.md', safe='/')})"
        return f"[[{ghost}]]"

    def _ghost_name(self) -> str:
        """A plausible note name that no note or alias has: Obsidian's unresolved link."""
        rng = self.rng
        while True:
            subject = rng.choice(rng.choice(DOMAINS)[2])
            name = f"{rng.choice(QUALIFIERS)} {subject} {rng.choice(KINDS)} Draft"
            if name.casefold() not in self.taken:
                return name
