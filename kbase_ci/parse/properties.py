"""Links in frontmatter properties: which property values are links (rule 9).

Obsidian reads a property value as a link only when the whole string is one link:
`up: "[[Index]]"` or `up: "[Index](Index.md)"`. A link inside longer text
(`related: "see [[Missing]] too"`) is text, not a link, and is neither followed nor
checked. Lists are read item by item; nested mappings as well.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kbase_ci.errors import UsageError
from kbase_ci.parse.linksyntax import closing_bracket, link_from_raw, wikilink_spans
from kbase_ci.parsed import Link

Finder = Callable[[str, str, tuple[int, int]], "tuple[int, int] | None"]
"""(key, text, (row, col) to search from) -> (row, col) of `text` in the raw YAML of
`key`, 0-based rows counted from the line after the opening `---`; None if not there."""


def property_link(value: str) -> bool:
    """Rule 9: True when the whole string is one wikilink (`[[Note#h|alias]]`) or one
    Markdown link (`[text](Note.md)`), as Obsidian requires of a property link. Nothing
    may stand around it, not even spaces; an embed (`![[x]]`) is not a property link."""
    if value.startswith("[["):
        return value.endswith("]]") and wikilink_spans(value) == [(0, len(value))]
    if value.startswith("[") and value.endswith(")"):
        close = closing_bracket(value, 0)
        return close > 0 and value[close + 1:close + 2] == "(" and ")" not in value[
            close + 2:-1].replace("\\)", "")
    return False


def _strings_in_order(value: Any) -> Iterator[str]:
    """Every string in a property value, in document order."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings_in_order(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings_in_order(v)


def property_links(data: dict[str, Any], find: Finder) -> list[Link]:
    """The links of a note's properties, each located where its text is in the YAML
    (line 2 is the first line after `---`), as written with YAML's quoting escapes
    (`'[[it''s]]'`, `"[[a \\"b\\"]]"`); a value YAML re-spelled otherwise (`\\u0062`,
    folding) is placed at its first `[`, else at the start of its key."""
    links: list[Link] = []
    for key, value in data.items():
        cursor = (0, 0)
        for text in _strings_in_order(value):
            if not property_link(text):
                continue
            pos = _locate(find, key, text, cursor)
            row, col = pos if pos is not None else (find(key, "", (0, 0)) or (0, 0))
            if pos is not None:
                cursor = (row, col + len(text))
            try:
                link = link_from_raw(text, row + 2, col + 1)
            except UsageError:  # not one link after all (a malformed destination)
                continue
            links.append(link._replace(frontmatter_key=key))
    return links


def _locate(find: Finder, key: str, text: str, cursor: tuple[int, int]
            ) -> tuple[int, int] | None:
    """Where `text` is written under `key`: as it is, in single quotes (`'` doubled),
    in double quotes (JSON's escapes are YAML's), else the first `[` from `cursor`."""
    import json

    spellings = [text, text.replace("'", "''"), json.dumps(text, ensure_ascii=False)[1:-1]]
    for spelled in dict.fromkeys(spellings):
        pos = find(key, spelled, cursor)
        if pos is not None:
            return pos
    return find(key, "[", cursor)
