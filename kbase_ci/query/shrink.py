"""What `payload.fit` cuts inside an answer's items once its lists are down to one item
each: long strings (never a name), fields that say nothing, and the index record's
bookkeeping (kbase_ci.query.payload)."""

from __future__ import annotations

from typing import Any

SHORT = 200
"""Shortened strings keep this many characters."""
ELLIPSIS = "\u2026"
TIGHT = 40
"""The last resort's string length (`fit`): a sentence's start, a notice's gist."""
COMMIT = 12
"""Hex digits of the index's commit kept under a tight budget (git's short form)."""
NAMES = frozenset({"path", "url", "note", "target", "source", "from", "to", "tag", "name"})
"""Fields that name something (a note, a URL): never shortened, a cut name names nothing."""


def compact_index(answer: dict[str, Any]) -> None:
    """The index record as small as it says what matters: its commit abbreviated (a
    40-digit hash costs ~40 tokens), its build time, a zero `stale_count` with its empty
    `stale_notes`, and a false `overlaid` left out."""
    index = answer.get("index")
    if not isinstance(index, dict):
        return
    commit = index.get("source_commit")
    if isinstance(commit, str) and len(commit) > COMMIT:
        index["source_commit"] = commit[:COMMIT]
    index.pop("built_at", None)
    if index.get("stale_count") == 0:  # (a list cut to nothing stays: it says "cut")
        del index["stale_count"]
        if index.get("stale_notes") == []:
            del index["stale_notes"]
    if index.get("overlaid") is False:
        del index["overlaid"]


def unset(node: Any, keep: frozenset[str], top: bool = True) -> bool:
    """Leave out the fields inside the answer's items that say nothing (null, false, an
    empty string or list) (a last resort before shortening text); True if any went."""
    went = False
    if isinstance(node, dict):
        for key in list(node):
            value = node[key]
            if top and key in keep:
                continue
            if not top and (value is None or value is False or value in ("", [])):
                del node[key]
                went = True
            else:
                went = unset(value, keep, False) or went
    elif isinstance(node, list):
        for item in node:
            went = unset(item, keep, False) or went
    return went



def shorten(node: Any, excess: int, shortened: list[str], size: int = SHORT, *,
             skip: frozenset[str] = frozenset()) -> int:
    """Cut the longest strings to `size` characters until about `excess` tokens are
    saved (not under the top-level keys `skip`); returns what is still to save."""
    strings: list[tuple[int, Any, Any, str]] = []

    def walk(n: Any, where: str) -> None:
        items = n.items() if isinstance(n, dict) else enumerate(n) if isinstance(n, list) \
            else ()
        for k, v in items:
            if not where and k in skip:
                continue
            here = f"{where}.{k}" if isinstance(k, str) else where
            if isinstance(v, str) and len(v) > size + 1 and k not in NAMES:
                strings.append((len(v), n, k, here.lstrip(".")))
            elif isinstance(v, dict | list):
                walk(v, here)

    walk(node, "")
    for length, parent, key, where in sorted(strings, key=lambda s: -s[0]):
        if excess <= 0:
            break
        parent[key] = parent[key][:size] + ELLIPSIS
        excess -= (length - size) // 4
        if where not in shortened:
            shortened.append(where)
    return excess
