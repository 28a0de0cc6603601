"""`hooklinks.jsonl`: where each note's links are, for a fresh clone's hook (issue 40).

A hook in a fresh clone has no parse cache. When a commit renames or deletes a note
linked from 2,000 others, parsing those 2,000 cost 6-12x a warm hook run. This table
lets the hook take their links from the index instead, for a note whose blob id is the
one indexed, after checking them against the note's own bytes
(kbase_ci.vault.indexhints): one row per note, in note order, listing every link as
`[line, col, raw]` (`[line, col, raw, key]` for a frontmatter property's link), the
whole link readable again from `raw` alone (`linksyntax.link_from_raw`). A note with a
link that `raw` alone does not give back exactly (a reference-style link `[t][ref]`,
whose destination is elsewhere) has the row `null`: the hook parses that note. Like
every row file it has its offsets beside it (`hooklinks.offsets.npy`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbase_ci.errors import UsageError
from kbase_ci.index.layout import HOOK_LINKS_FILE
from kbase_ci.index.rowfile import write_rows
from kbase_ci.parse.linksyntax import link_from_raw

if TYPE_CHECKING:
    from kbase_ci.parsed import Link, ParsedNote


def hook_row(links: Sequence[Link]) -> list[list[Any]] | None:
    """A note's row: its links by position and text, or None when one of them is not
    what its text alone says (the hook then parses the note)."""
    row: list[list[Any]] = []
    for link in links:
        # A wikilink is made from its text by the parser itself: no second reading.
        if link.style != "wiki":
            try:
                again = link_from_raw(link.raw, link.line, link.col)
            except UsageError:
                return None
            if again != link._replace(frontmatter_key=None):
                return None
        row.append([link.line, link.col, link.raw] if link.frontmatter_key is None
                   else [link.line, link.col, link.raw, link.frontmatter_key])
    return row


def write_hook_links(root: Path, notes: Sequence[ParsedNote]) -> None:
    """`hooklinks.jsonl` of `notes` (in note order: sorted by path)."""
    write_rows(root / HOOK_LINKS_FILE, [hook_row(n.links) for n in notes])
