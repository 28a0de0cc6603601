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
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kbase_ci.model import BlockId, Heading


# The characters Obsidian warns "may not work" in a link (`# | ^ : %% [[ ]]`): a link
# cannot carry them, so they must not take part in the comparison either.
_DROPPED = str.maketrans("", "", ":#|^[]%")
_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", ":#|^[]%")
_ASCII_NOT_SLUG = re.compile(r"[^a-z0-9 _-]")
# GitHub slugs the rendered heading, so link/image syntax leaves only its text.
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HTML_TAG = re.compile(r"<[^>]*>")


def normalize_heading(text: str) -> str:
    """Obsidian's comparison key: casefolded, `: # | ^ [ ] %` dropped, spaces collapsed."""
    if text.isascii():  # the common case; NFC and casefold are identities here
        return " ".join(text.translate(_ASCII_FOLD).split())
    folded = unicodedata.normalize("NFC", text).casefold().translate(_DROPPED)
    return unicodedata.normalize("NFC", " ".join(folded.split()))


# Parents repeat the note's own heading texts, so each is normalised once per run.
_normalized = lru_cache(maxsize=1 << 16)(normalize_heading)


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


def _part_matches(part: str, text: str, *, markdown: bool) -> bool:
    if _normalized(part) == _normalized(text):
        return True
    return markdown and part.lower() == github_slug(text)


def _nested_under(parents: Sequence[str], outer: Sequence[str], *, markdown: bool) -> bool:
    """True when `outer` matches enclosing headings in order, skipping any levels."""
    i = 0
    for parent in parents:
        if i < len(outer) and _part_matches(outer[i], parent, markdown=markdown):
            i += 1
    return i == len(outer)


class HeadingIndex:
    """One note's headings, keyed once so each anchor lookup is a dict hit.

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

    def find(self, parts: Sequence[str], *, markdown: bool) -> Heading | None:
        """The first heading matching `parts[-1]` nested under `parts[:-1]` (any depth)."""
        wanted = [p for p in parts if p.strip()]
        if not wanted:
            return None
        last = wanted[-1]
        hits = self._by_key.get(normalize_heading(last), [])
        if markdown:
            # The slug is exact text (with its `-1` suffix), so it is looked up as written.
            hits = sorted({*hits, *self._slugs().get(last.lower(), ())})
        outer = wanted[:-1]
        for i in hits:
            heading = self._headings[i]
            if not outer or _nested_under(heading.parents, outer, markdown=markdown):
                return heading
        return None


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
