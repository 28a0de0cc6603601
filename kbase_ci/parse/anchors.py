"""Heading and block anchors: how `#Heading`, `#h1#h2`, `#slug` and `#^id` find their target.

Two spellings meet here. Obsidian compares heading text loosely (case-insensitive,
a few link-breaking characters ignored); GitHub renders `file.md#heading-slug`. A
vault read both in Obsidian and on GitHub uses both, so Markdown-link anchors
accept either, while wikilink anchors (which GitHub never renders) use only the
Obsidian comparison.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kbase_ci.parsed import BlockId, Heading


# Rule 1 and 2 of docs/resolution.md: Obsidian turns each of these characters, and a
# line break, into a space before comparing heading texts (`_`, `-`, `'` and non-ASCII
# characters stay).
HEADING_PUNCTUATION = '!"#$%&()*+,.:;<=>?@[\\]^`{|}~/'
_TO_SPACE = str.maketrans({c: " " for c in HEADING_PUNCTUATION + "\r\n"})
_ASCII_KEY = str.maketrans({**{c: " " for c in HEADING_PUNCTUATION + "\r\n"},
                            **{c: c.lower() for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}})
# JavaScript's `\s`, the whitespace Obsidian collapses (Python's `str.split()` would also
# take the ASCII separators U+001C-U+001F and U+0085, which JavaScript keeps).
_JS_SPACE = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f"
                       "\u205f\u3000\ufeff]+")
# What a suggested heading link leaves out of the heading text: what Obsidian's heading
# suggester leaves out (the characters its help says "may not work" in a link,
# `# | ^ : %% [[ ]]`), and what would start something else inside the link (`\`
# escapes, `` ` `` code, `$` math) or end it (line breaks).
_LINK_UNSAFE = re.compile(r"%%|[#|^:\[\]\\`$\r\n]")
_ASCII_NOT_SLUG = re.compile(r"[^a-z0-9 _-]")
# GitHub slugs the rendered heading, so link/image syntax leaves only its text.
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HTML_TAG = re.compile(r"<[^>]*>")


def punctuation_to_space(text: str) -> str:
    """Rule 1 and 2: each of ``!"#$%&()*+,.:;<=>?@[\\]^`{|}~/`` and each line break
    becomes a space, as in Obsidian's heading comparison, so `## A:B` is `[[T#A B]]`
    (not `[[T#AB]]`), `## R&D budget` is `[[T#R D budget]]` and ``## `run()` `` is
    `[[T#run]]`. `_`, `-`, `'` and non-ASCII punctuation stay."""
    return text.translate(_TO_SPACE)


def collapse_whitespace(text: str) -> str:
    """Rule 1: runs of whitespace (JavaScript's `\\s`) become one space, and the ends are
    trimmed, so `Many   spaces` is `[[T#Many spaces]]`."""
    return _JS_SPACE.sub(" ", text).strip(" ")


def lower_case(text: str) -> str:
    """Rule 10: JavaScript's `toLowerCase`, not Unicode case folding: `## Straße` is not
    `[[T#STRASSE]]` (casefold would say it is). Python's `str.lower` applies the same
    Unicode lowercase mapping, final sigma included."""
    return text.lower()


def composed(text: str) -> str:
    """Unicode NFC, so a heading typed decomposed (macOS input) matches a composed link.
    kbase's own lenient choice, not confirmed in Obsidian (docs/resolution.md)."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def normalize_heading(text: str) -> str:
    """The key two heading texts are compared by: `composed`, `punctuation_to_space`,
    `collapse_whitespace`, `lower_case` (docs/resolution.md, rules 1, 2 and 10)."""
    if text.isascii():  # the common case: one translate table does rules 1, 2 and 10
        return collapse_whitespace(text.translate(_ASCII_KEY))
    return lower_case(collapse_whitespace(punctuation_to_space(composed(text))))


def heading_link_text(text: str) -> str | None:
    """`text` as a link should name it, the way Obsidian's heading suggester writes it:
    `# | ^ : %% [[ ]]` (and `\\`, `` ` ``, `$`, line breaks, which would start or end
    something else inside a link) become spaces and spaces collapse, so `## Step 1: Go`
    is `[[T#Step 1 Go]]` and ``## `run()` `` is `[[T#run()]]`. Those characters are all
    in `HEADING_PUNCTUATION`, so the result matches the heading; None when nothing is
    left to write."""
    written = collapse_whitespace(_LINK_UNSAFE.sub(" ", text))
    return written or None


def github_slug(text: str) -> str:
    """GitHub's anchor for one heading (github-slugger), without the duplicate suffix.

    Lowercase; letters, digits, marks, `-` and `_` kept; every space becomes `-`
    (runs are not collapsed: `a  b` -> `a--b`, as on GitHub); all else is removed.
    """
    plain = text
    if "[" in plain or "<" in plain:
        plain = _HTML_TAG.sub("", _MD_LINK.sub(r"\1", plain))
    plain = plain.strip().lower()
    if plain.isascii():
        return _ASCII_NOT_SLUG.sub("", plain).replace(" ", "-")
    out: list[str] = []
    for ch in plain:
        if ch == " ":
            out.append("-")
        elif ch in "-_" or unicodedata.category(ch)[0] in "LNM":
            out.append(ch)
    return "".join(out)


def github_slugs(headings: Iterable[str]) -> list[str]:
    """Slugs for every heading of one note, in order: repeats get `-1`, `-2`, ...

    Same loop as github-slugger, so a heading literally named `a-1` still pushes a
    second `a` on to `a-2`.
    """
    seen: dict[str, int] = {}
    out: list[str] = []
    for text in headings:
        base = slug = github_slug(text)
        while slug in seen:
            seen[base] += 1
            slug = f"{base}-{seen[base]}"
        seen[slug] = 0
        out.append(slug)
    return out


class HeadingIndex:
    """One note's headings, keyed once so each anchor lookup is a few dict hits.

    The resolver keeps one per note it has checked an anchor against. Slugs are
    built on the first Markdown-link lookup: most vaults link headings by wikilink.
    """

    __slots__ = ("_by_key", "_by_slug", "_headings")

    def __init__(self, headings: Sequence[Heading]) -> None:
        self._headings = tuple(headings)
        self._by_key: dict[str, list[int]] = {}
        self._by_slug: dict[str, list[int]] | None = None
        by_key = self._by_key
        for i, heading in enumerate(self._headings):
            key = normalize_heading(heading.text)
            if key in by_key:
                by_key[key].append(i)
            else:
                by_key[key] = [i]

    def _slugs(self) -> dict[str, list[int]]:
        if self._by_slug is None:
            self._by_slug = {}
            for i, slug in enumerate(github_slugs(h.text for h in self._headings)):
                self._by_slug.setdefault(slug, []).append(i)
        return self._by_slug

    def _matching(self, part: str, markdown: bool) -> list[int]:
        hits = self._by_key.get(normalize_heading(part), [])
        if markdown:
            # A slug is exact text (with its `-1` suffix), so it is looked up as written.
            slugged = self._slugs().get(part.lower())
            if slugged:
                hits = sorted({*hits, *slugged})
        return hits

    def find(self, parts: Sequence[str], *, markdown: bool) -> Heading | None:
        """The heading `[[T#p1#p2...]]` opens (rule 3 of docs/resolution.md, Obsidian's
        reading): `p1` is the first heading matching it; each next part is the first
        matching heading after the previous match whose level is deeper than that
        match's, inside its section or not (`# Alpha`, `# Beta`, `## Child`:
        `#Alpha#Child` finds `Child`). Markdown-link parts may also be GitHub slugs."""
        wanted = [p for p in parts if p.strip()]
        if not wanted:
            return None
        after, level, found = 0, 0, None
        for part in wanted:
            hits = self._matching(part, markdown)
            k = bisect_left(hits, after)
            while k < len(hits) and self._headings[hits[k]].level <= level:
                k += 1
            if k == len(hits):
                return None
            found = self._headings[hits[k]]
            after, level = hits[k] + 1, found.level
        return found


def find_block(block_ids: Sequence[BlockId], block_id: str) -> BlockId | None:
    """The `^id` marker named by `block_id` (with or without its `^`), case-insensitive.

    Obsidian generates lowercase ids; a hand-typed `^ABC` still names the same block.
    """
    wanted = block_id[1:] if block_id.startswith("^") else block_id
    for block in block_ids:
        if block.id == wanted:
            return block
    folded = wanted.casefold()
    for block in block_ids:
        if block.id.casefold() == folded:
            return block
    return None
