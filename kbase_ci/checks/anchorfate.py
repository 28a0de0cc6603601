"""What became of the heading or block id a link named, between two versions of a note."""

from __future__ import annotations

from kbase_ci.parse.anchors import (
    HeadingIndex,
    find_block,
    github_slugs,
    heading_link_text,
    normalize_heading,
)
from kbase_ci.parsed import Link, ParsedNote

AnchorFate = tuple[str, str, str | None, str | None]
"""(code, what was lost in words, its new name or None when removed, the link's new
subpath when renamed)."""


def anchor_fate(link: Link, old: ParsedNote, new: ParsedNote) -> AnchorFate | None:
    """How `link`'s heading or block id, found in `old`, went missing in `new`; None when
    `old` did not have it either. A heading or block counts as renamed when the note
    keeps the same number of them and the one at that position changed (same level
    for headings); otherwise it was removed."""
    if link.anchor_kind == "block":
        block = find_block(old.block_ids, link.subpath)
        if block is None:
            return None
        i = next(k for k, b in enumerate(old.block_ids) if b is block)
        renamed = (new.block_ids[i].id if len(new.block_ids) == len(old.block_ids)
                   and new.block_ids[i].id != block.id else None)
        if renamed is None:
            return "KB112", f"block `^{block.id}`", None, None
        return "KB112", f"block `^{block.id}`", f"^{renamed}", f"^{renamed}"
    markdown = link.style == "markdown"
    parts = list(link.heading_path)
    heading = HeadingIndex(old.headings).find(parts, markdown=markdown)
    if heading is None:
        return None
    i = next(k for k, h in enumerate(old.headings) if h is heading)
    what = f"heading `{heading.text}`"
    if not (len(new.headings) == len(old.headings) and new.headings[i].level == heading.level
            and new.headings[i].text != heading.text):
        return "KB111", what, None, None
    text = new.headings[i].text
    last = heading_link_text(text) or text  # as Obsidian writes it into a link
    if markdown and normalize_heading(parts[-1]) != normalize_heading(heading.text):
        last = github_slugs(h.text for h in new.headings)[i]  # the link used the slug
    return "KB111", what, text, "#".join([*parts[:-1], last])
