"""The lists of an answer's JSON that `payload.fit` may cut: where they are, the name
each goes by (keys joined with `.`), how many items each name has, and the `kept/total`
record of the ones cut (`truncated.lists`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

STALE = "index.stale_notes"
"""The one list under a kept key that can go, and goes first (see `payload.cut_stale`)."""

SAMPLE = 200
"""Items of a long list measured to guess what its others cost (`payload._drop`)."""


def lists_of(node: Any, keep: frozenset[str], path: tuple[Any, ...] = (), *,
             most: int | None = None) -> Iterator[tuple[tuple[Any, ...], list[Any]]]:
    """Every list of dicts or strings below the top-level keys not in `keep`, outermost
    first (a list inside a list's items too; with `most`, inside its first `most` items
    only: a list that long goes first anyway, and walking 200k items costs seconds)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if not path and key in keep:
                continue
            yield from lists_of(value, keep, (*path, key), most=most)
    elif isinstance(node, list):
        # Lists of records or strings: a list of numbers is one value (`lines: [7, 9]`).
        if node and path and isinstance(node[0], dict | str):
            yield path, node
        for i, item in enumerate(node if most is None else node[:most]):
            if isinstance(item, dict | list):
                yield from lists_of(item, keep, (*path, i), most=most)


def list_name(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path if not isinstance(p, int)) or "answer"


def list_sizes(answer: dict[str, Any], keep: frozenset[str]) -> dict[str, int]:
    """Items per list name, over every list of that name (and the stale list). Lists
    inside the items of a list longer than `SAMPLE` are counted in its first items and
    scaled up: walking 200k items costs seconds, and the long list goes first anyway."""
    sizes: dict[str, int] = {}
    scale: dict[tuple[Any, ...], float] = {(): 1.0}
    for path, lst in lists_of(answer, keep, most=SAMPLE):
        parent = next((scale[path[:i]] for i in range(len(path) - 1, -1, -1)
                       if path[:i] in scale), 1.0)
        name = list_name(path)
        sizes[name] = sizes.get(name, 0) + round(len(lst) * parent)
        scale[path] = parent * max(1.0, len(lst) / SAMPLE)
    stale = stale_list(answer)
    if stale is not None:
        sizes[STALE] = len(stale)
    return sizes


def record_cuts(note: dict[str, Any], dropped: dict[str, int], totals: dict[str, int],
                carried: dict[str, str]) -> None:
    """`truncated.lists`: each list cut, as `kept/total`, lists named by their keys
    joined with `.`, all lists of one name together (`carried`: what an earlier cut,
    `payload.cut_stale`, recorded: its total stands)."""
    for name, n in dropped.items():
        earlier = carried.get(name)
        if earlier is None:
            total, gone = totals.get(name, n), n
        else:
            kept, total = map(int, earlier.split("/"))
            gone = total - kept + n
        note["lists"][name] = f"{max(0, total - gone)}/{total}"


def stale_list(answer: dict[str, Any]) -> list[Any] | None:
    index = answer.get("index")
    stale = index.get("stale_notes") if isinstance(index, dict) else None
    return stale if isinstance(stale, list) else None
