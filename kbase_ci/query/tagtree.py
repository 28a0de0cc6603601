"""Tags as a hierarchy: notes by tag (`rust` holds `rust/async`), counts per tag and per
branch of the tag tree, and which tags go together.

Tags compare case-insensitively (as Obsidian's do); a tag is shown in its most used
spelling (ties: the first in sort order).
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Any

from kbase_ci.query.filters import check_tags, domain_key
from kbase_ci.query.view import QueryView


def tag_matches(tags: tuple[str, ...] | list[str], want: str) -> bool:
    """A note with `tags` has `want` or a tag below it."""
    w = want.strip().lstrip("#").casefold()
    return any(t.casefold() == w or t.casefold().startswith(w + "/") for t in tags)


def notes_answer(view: QueryView, *, tags: list[str] | None = None, any_tag: bool = False,
                 domain: str | None = None) -> dict[str, Any]:
    """Notes with every tag in `tags` (each or one below it), or with any of them with
    `any_tag`, optionally of one domain; sorted by path."""
    wanted = [t.strip().lstrip("#") for t in tags or []]
    domain = domain_key(view, domain)
    combine = any if any_tag else all
    found = []
    for info in view.notes.values():
        if domain is not None and info.domain != domain:
            continue
        if wanted and not combine(tag_matches(info.tags, w) for w in wanted):
            continue
        found.append({"path": info.path, "title": info.title, "tags": list(info.tags),
                      "domain": info.domain})
    if not found and wanted:
        check_tags(view, wanted)  # a tag no note has: a usage error naming close ones
    return {"tags": wanted, "match": "any" if any_tag else "all", "domain": domain,
            "count": len(found), "notes": found, "index": view.index_info()}


def _note_tags(view: QueryView) -> tuple[list[set[str]], dict[str, str]]:
    """Each note's distinct casefolded tags, and casefolded -> shown spelling."""
    spellings: dict[str, Counter[str]] = {}
    per_note: list[set[str]] = []
    for info in view.notes.values():
        keys = set()
        for t in info.tags:
            k = t.casefold()
            spellings.setdefault(k, Counter())[t] += 1
            keys.add(k)
        per_note.append(keys)
    shown = {k: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0]
             for k, c in spellings.items()}
    return per_note, shown


def _branches(tag: str) -> list[str]:
    parts = tag.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def tags_answer(view: QueryView, *, tree: bool = False, stats: bool = False,
                limit: int = 50) -> dict[str, Any]:
    """`tags`: `{tag, count, total}` per tag, most used first (count = notes with the tag
    itself, total = notes with it or one below it; branches nobody wrote, like `a` of
    `a/b`, are listed with count 0). `tree` adds the nested form; `stats` adds the
    `limit` most frequent pairs of tags found on the same note."""
    per_note, shown = _note_tags(view)
    exact: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for keys in per_note:
        exact.update(keys)
        total.update({b for k in keys for b in _branches(k)})
    for k in sorted(shown):  # spell an unwritten branch like its first written child
        parts = shown[k].split("/")
        for depth, branch in enumerate(_branches(k)[:-1], 1):
            shown.setdefault(branch, "/".join(parts[:depth]))
    records = [{"tag": shown[k], "count": exact[k], "total": total[k]}
               for k in sorted(total, key=lambda k: (-total[k], -exact[k], k))]
    answer: dict[str, Any] = {"notes": len(per_note),
                              "tagged": sum(1 for keys in per_note if keys),
                              "tags": records}
    if tree:
        answer["tree"] = _tree(sorted(total), shown, exact, total)
    if stats:
        answer["cooccurrence"] = _pairs(per_note, shown, exact, limit)
    answer["index"] = view.index_info()
    return answer


def _tree(keys: list[str], shown: dict[str, str], exact: Counter[str],
          total: Counter[str]) -> list[dict[str, Any]]:
    roots: list[dict[str, Any]] = []
    at: dict[str, dict[str, Any]] = {}
    for k in keys:  # sorted, so a branch always comes before what is below it
        node = {"name": shown[k].rsplit("/", 1)[-1], "tag": shown[k], "count": exact[k],
                "total": total[k], "children": []}
        at[k] = node
        parent = k.rsplit("/", 1)[0] if "/" in k else None
        (at[parent]["children"] if parent is not None else roots).append(node)
    return roots


def _pairs(per_note: list[set[str]], shown: dict[str, str], exact: Counter[str],
           limit: int) -> list[dict[str, Any]]:
    together: Counter[tuple[str, str]] = Counter()
    for keys in per_note:
        together.update(combinations(sorted(keys), 2))
    ranked = sorted(together.items(), key=lambda kv: (-kv[1], kv[0]))
    if limit:
        ranked = ranked[:limit]
    return [{"a": shown[a], "b": shown[b], "count": n,
             "jaccard": round(n / (exact[a] + exact[b] - n), 4)} for (a, b), n in ranked]
