"""Turns a `Plan` into note text: frontmatter, headings, prose, lists, tables, code, callouts.

Random body links are spread over a note by a byte "credit" (links per byte of prose), so
long notes carry more of them; whatever is left over lands in a `## See Also` list.
"""

from __future__ import annotations

import random
import re
import struct
import zlib
from datetime import timedelta

from .links import ATTACH_DIR, LinkMaker
from .plan import FIRST_DAY, Note, Plan
from .vocab import (
    CODE_SNIPPETS,
    CODE_TOKENS,
    CODE_TRAPS,
    CONTENT_CUM,
    CONTENT_WORDS,
    FUNCTION_CUM,
    FUNCTION_WORDS,
)

_FIELD = re.compile(r"\{(\w+)\}")
_IDENT = tuple(w for w in CONTENT_WORDS if len(w) > 3)
_MODULES = ("os", "json", "asyncio", "store", "client", "planner", "cache", "engine")
_CALLOUTS = ("note", "tip", "warning", "info", "example", "question")
_TABLE_HEADERS = (("Setting", "Default", "Effect"), ("Option", "Value", "Notes"),
                  ("Metric", "p50", "p99", "Comment"))
_EXTERNAL = ("[the asyncio docs](https://docs.python.org/3/library/asyncio.html)",
             "[upstream README](https://github.com/example/project/blob/main/README.md)",
             "<https://www.postgresql.org/docs/current/mvcc.html>")
_INLINE_TAGS = ("todo", "idea", "status/wip", "question", "review/later", "café")
# Not the built-in note types (handover, question, answer, discovery, decision): the
# benchmark vault measures link checking, and its only findings are the planted ones.
_TYPES = ("concept", "howto", "reference", "project", "guide")


class Renderer:
    def __init__(self, rng: random.Random, plan: Plan) -> None:
        self.rng = rng
        self.plan = plan
        self.lm = LinkMaker(rng, plan)
        self.rate = 0.0
        self.credit = 0.0
        self.pending: list[str] = []
        self.tags: tuple[str, ...] = ()

    @property
    def links(self) -> int:
        return self.lm.links

    @property
    def broken(self) -> int:
        return self.lm.broken

    def render_all(self) -> list[tuple[str, bytes]]:
        files = [(f"{note.stem}.md", self._note(i).encode("utf-8"))
                 for i, note in enumerate(self.plan.notes)]
        self.lm.orphan_images()
        files += [(f"{ATTACH_DIR}/{name}", _png(k)) for k, name in enumerate(self.lm.images)]
        return files

    def _note(self, i: int) -> str:
        note, rng = self.plan.notes[i], self.rng
        self.tags = (*note.tags, *_INLINE_TAGS)
        blocks: list[str] = []
        if note.kind != "regular" or rng.random() < 0.88:
            blocks.append(self._frontmatter(i, note))
        if rng.random() < {"regular": 0.85, "daily": 0.5}.get(note.kind, 1.0):
            blocks.append(f"# {note.name}")
        n_links = 4 if note.kind == "folder" else note.n_links
        self.pending = self.lm.random_links(i, n_links)
        self.rate = n_links / max(note.size, 1)
        self.credit = rng.random()
        if note.kind in ("folder", "home"):
            blocks += self._hub(i)
        else:
            blocks += self._sections(note)
        if self.pending:
            blocks.append("## See Also")
            blocks.append("\n".join(f"- {link}" for link in self.pending))
        return "\n\n".join(blocks) + "\n"

    def _frontmatter(self, i: int, note: Note) -> str:
        rng, lm = self.rng, self.lm
        lines = ["---"]
        if note.kind == "daily" and note.day is not None:
            lines += [f"date: {note.day.isoformat()}", "tags: [daily]", "type: daily"]
            return "\n".join([*lines, "---"])
        if rng.random() < 0.6:
            lines.append(f'title: "{note.name}"')
        if note.aliases:
            lines += ["aliases:", *(f'  - "{a}"' for a in note.aliases)]
        if note.tags:
            if rng.random() < 0.5:
                lines.append(f"tags: [{', '.join(note.tags)}]")
            else:
                lines += ["tags:", *(f"  - {t}" for t in note.tags)]
        created = FIRST_DAY + timedelta(days=rng.randrange(3000))
        lines.append(f"created: {created.isoformat()}")
        if rng.random() < 0.6:
            lines.append(f"updated: {(created + timedelta(days=rng.randrange(400))).isoformat()}")
        if note.kind == "folder":
            lines.append("type: moc")
        elif rng.random() < 0.4:
            lines.append(f"type: {rng.choice(_TYPES)}")
        if note.up:
            lines.append(f'up: "{lm.counted(f"[[{note.up}]]")}"')
        if note.kind == "regular" and rng.random() < 0.05:
            targets = [lm.pick(i) for _ in range(rng.randint(1, 3))]
            lines += ["related:", *(f'  - "{lm.counted(f"[[{t.ref}]]")}"' for t in targets)]
        return "\n".join([*lines, "---"])

    def _hub(self, i: int) -> list[str]:
        note, notes, lm = self.plan.notes[i], self.plan.notes, self.lm
        blocks = [self._paragraph(take=False)]
        if note.kind == "home":
            areas = [n for n in notes if n.kind == "folder" and "/" not in n.folder]
            recent = [n for n in notes if n.kind == "daily"][-7:]
            blocks += ["## Areas", "\n".join(f"- {lm.counted(f'[[{n.ref}]]')}" for n in areas),
                       "## Recent", "\n".join(f"- {lm.counted(f'[[{n.ref}]]')}" for n in recent)]
            return blocks
        members = [n for n in notes if n is not note and (n.folder == note.folder or (
            n.kind == "folder" and n.folder.rpartition("/")[0] == note.folder))]
        if len(members) > 150:
            keep = set(self.rng.sample(range(len(members)), 150))
            members = [n for k, n in enumerate(members) if k in keep]
        items = [f"- {lm.counted(f'[[{n.ref}]]')} - {self._words(3, 6)}" for n in members]
        blocks += ["## Contents", "\n".join(items) or "- nothing here yet"]
        blocks += ["## Start Here", self._paragraph()]
        return blocks

    def _sections(self, note: Note) -> list[str]:
        rng = self.rng
        sections: list[tuple[str, list[str]]] = [("", [])]
        for level, text, _ in note.headings:
            sections.append((f"{'#' * level} {text}", []))
        for j, bid in enumerate(note.blocks):
            sections[j % len(sections)][1].append(bid)
        budget = note.size // len(sections)
        table_ok = rng.random() < 0.25
        out: list[str] = []
        for heading, bids in sections:
            if heading:
                out.append(heading)
            size = 0
            for bid in bids:
                out.append(f"{self._paragraph(1, 2)} ^{bid}")
                size += len(out[-1])
            if heading == "## Log":
                out.append(self._list(time_stamps=True))
                continue
            if heading == "## Tasks":
                out.append(self._list(tasks=True))
                continue
            while size < budget:
                r = rng.random()
                if r < 0.6 or (not heading and size == 0):
                    out.append(self._paragraph())
                elif r < 0.78:
                    out.append(self._list())
                elif r < 0.88:
                    out.append(self._code())
                elif r < 0.93 and table_ok:
                    out.append(self._table())
                else:
                    out.append(self._callout())
                size += len(out[-1])
        return out

    def _take(self, nbytes: int) -> list[str]:
        self.credit += nbytes * self.rate
        k = min(int(self.credit), len(self.pending))
        self.credit -= k
        return [self.pending.pop() for _ in range(k)]

    def _sentence(self, lo: int = 5, hi: int = 13) -> list[str]:
        rng = self.rng
        n = rng.randint(lo, hi)
        content = rng.choices(CONTENT_WORDS, cum_weights=CONTENT_CUM, k=n)
        glue = rng.choices(FUNCTION_WORDS, cum_weights=FUNCTION_CUM, k=n)
        mask = rng.getrandbits(n)
        words = []
        for j in range(n):
            if mask >> j & 1:
                words.append(glue[j])
            words.append(content[j])
        if len(words) > 2 and rng.random() < 0.3:
            words[rng.randrange(1, len(words))] = f"`{rng.choice(CODE_TOKENS)}`"
        if len(words) > 2 and rng.random() < 0.08:
            k = rng.randrange(1, len(words))
            words[k] = f"**{words[k]}**"
        words[0] = words[0][0].upper() + words[0][1:]
        return words

    def _words(self, lo: int, hi: int) -> str:
        return " ".join(self._sentence(lo, hi))

    def _with_links(self, sentences: list[list[str]], take: bool = True) -> str:
        if take:
            nbytes = sum(sum(map(len, s)) + len(s) for s in sentences)
            for link in self._take(nbytes):
                s = self.rng.choice(sentences)
                s.insert(self.rng.randint(1, len(s)), link)
        return " ".join(" ".join(s) + "." for s in sentences)

    def _paragraph(self, lo: int = 2, hi: int = 6, *, take: bool = True) -> str:
        rng = self.rng
        text = self._with_links([self._sentence() for _ in range(rng.randint(lo, hi))], take)
        r = rng.random()
        if r < 0.03:
            text += f" See {rng.choice(_EXTERNAL)} for details."
        elif r < 0.04:
            text += " Obsidian stores it as `[[Target#Heading|alias]]` in the file."
        elif r < 0.14:
            text += f" #{rng.choice(self.tags)}"
        return text

    def _list(self, *, tasks: bool = False, time_stamps: bool = False) -> str:
        rng = self.rng
        ordered = not (tasks or time_stamps) and rng.random() < 0.25
        lines = []
        for k in range(rng.randint(3, 7)):
            text = self._with_links([self._sentence(3, 8)])
            if tasks:
                lines.append(f"- [{rng.choice(' x')}] {text}")
            elif time_stamps:
                lines.append(f"- {8 + k:02d}:{rng.randrange(60):02d} {text}")
            else:
                lines.append(f"{k + 1}. {text}" if ordered else f"- {text}")
            if rng.random() < 0.12:
                indent = "   " if ordered else "  "
                lines.append(f"{indent}- {self._with_links([self._sentence(2, 5)])}")
        return "\n".join(lines)

    def _code(self) -> str:
        rng = self.rng
        lang, template = rng.choice(CODE_SNIPPETS)
        a, b = rng.sample(_IDENT, 2)
        vals = {"mod": rng.choice(_MODULES), "fn": f"{a}_{b}", "snake": f"{b}_{a}",
                "snake2": f"{a}s", "camel": a + b.capitalize(),
                "Camel": a.capitalize() + b.capitalize(), "arg": rng.choice(_IDENT),
                "var": f"{b}s", "word": a, "word2": b, "Word": a.capitalize(),
                "num": str(rng.randrange(1, 5000))}
        body = _FIELD.sub(lambda m: vals[m.group(1)], template)
        if lang in CODE_TRAPS and rng.random() < 0.3:
            body += "\n" + CODE_TRAPS[lang]
        fence = "~~~" if rng.random() < 0.1 else "```"
        return f"{fence}{lang}\n{body}\n{fence}"

    def _table(self) -> str:
        rng = self.rng
        header = rng.choice(_TABLE_HEADERS)
        rows = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        for _ in range(rng.randint(3, 6)):
            cells = [f"`{rng.choice(CODE_TOKENS)}`", str(rng.randrange(1, 10_000))]
            cells += [self._words(1, 4) for _ in header[2:]]
            rows.append("| " + " | ".join(cells) + " |")
        return "\n".join(rows)

    def _callout(self) -> str:
        rng = self.rng
        title = self._words(1, 3)
        text = self._with_links([self._sentence() for _ in range(rng.randint(1, 3))])
        return f"> [!{rng.choice(_CALLOUTS)}] {title}\n> {text}"


def _png(k: int) -> bytes:
    """A 1x1 RGB PNG, colour from `k`, deflate in a stored block so no zlib build can vary it."""
    raw = bytes((0, (k * 37) % 256, (k * 91) % 256, (k * 53) % 256))
    deflate = b"\x78\x01\x01" + struct.pack("<HH", len(raw), 0xFFFF ^ len(raw)) + raw
    deflate += struct.pack(">I", zlib.adler32(raw))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", deflate) + chunk(
        b"IEND", b"")
