"""Tags as a hierarchy: notes by tag (`rust` holds `rust/async`), counts per tag and per
branch of the tag tree, and which tags go together.

Tags compare case-insensitively (as Obsidian's do); a tag is shown in its most used
spelling (ties: the first in sort order).
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Annotated

from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.filters import check_tags, domain_key
from kbase_ci.query.spec import MAX_LIMIT, Domain, Param, Query, Session, Tags, none_if_blank
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field


class NoteEntry(Record):
    path: str
    title: str
    tags: list[str]
    domain: str


class NotesAnswer(Record):
    tags: list[str] = json_field(keep=True)
    """The tags asked for."""
    match: str
    domain: str | None
    count: int
    notes: list[NoteEntry]
    index: IndexInfo


class TagCount(Record):
    """count = notes with the tag itself, total = with it or a tag below it."""

    tag: str
    count: int
    total: int


class TagNode(Record):
    name: str
    tag: str
    count: int
    total: int
    children: list[TagNode]


class TagPair(Record):
    a: str
    b: str
    count: int
    jaccard: float


class TagsAnswer(Record):
    notes: int
    tagged: int
    tags: list[TagCount]
    tree: list[TagNode] | None = json_field(omit=True)
    cooccurrence: list[TagPair] | None = json_field(omit=True)
    index: IndexInfo


def tag_matches(tags: tuple[str, ...] | list[str], want: str) -> bool:
    """A note with `tags` has `want` or a tag below it."""
    w = want.strip().lstrip("#").casefold()
    return any(t.casefold() == w or t.casefold().startswith(w + "/") for t in tags)


def notes_answer(view: QueryView, *, tags: list[str] | None = None, any_tag: bool = False,
                 domain: str | None = None) -> NotesAnswer:
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
        found.append(NoteEntry(info.path, info.title, list(info.tags), info.domain))
    if not found and wanted:
        check_tags(view, wanted)  # a tag no note has: a usage error naming close ones
    return NotesAnswer(wanted, "any" if any_tag else "all", domain, len(found), found,
                       view.index_info())


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
                limit: int = 50) -> TagsAnswer:
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
    records = [TagCount(shown[k], exact[k], total[k])
               for k in sorted(total, key=lambda k: (-total[k], -exact[k], k))]
    return TagsAnswer(len(per_note), sum(1 for keys in per_note if keys), records,
                      _tree(sorted(total), shown, exact, total) if tree else None,
                      _pairs(per_note, shown, exact, limit) if stats else None,
                      view.index_info())


MAX_TREE_DEPTH = 64
"""Levels `tags --tree` nests: a tag deeper than that (a 500-level `#a/a/a/...` made the
recursive build exit 3, issue 28) is listed under its ancestor at this level, named by
the rest of its path, so every reader of the tree (JSON encoder, text, budget) sees a
bounded depth."""


def _tree(keys: list[str], shown: dict[str, str], exact: Counter[str],
          total: Counter[str]) -> list[TagNode]:
    """Built bottom-up without recursion; see MAX_TREE_DEPTH."""
    children: dict[str | None, list[str]] = {}
    for k in keys:  # sorted, so a branch always comes before what is below it
        parts = k.split("/")
        parent = "/".join(parts[:min(len(parts) - 1, MAX_TREE_DEPTH)]) or None
        children.setdefault(parent, []).append(k)
    nodes: dict[str, TagNode] = {}
    for k in sorted(keys, key=lambda k: -k.count("/")):  # deepest first
        depth = k.count("/") + 1
        name = ("/".join(shown[k].split("/")[MAX_TREE_DEPTH:]) if depth > MAX_TREE_DEPTH
                else shown[k].rsplit("/", 1)[-1])
        below = children.get(k, []) if depth <= MAX_TREE_DEPTH else []
        nodes[k] = TagNode(name, shown[k], exact[k], total[k], [nodes[c] for c in below])
    return [nodes[k] for k in children.get(None, [])]


def _pairs(per_note: list[set[str]], shown: dict[str, str], exact: Counter[str],
           limit: int) -> list[TagPair]:
    together: Counter[tuple[str, str]] = Counter()
    for keys in per_note:
        together.update(combinations(sorted(keys), 2))
    ranked = sorted(together.items(), key=lambda kv: (-kv[1], kv[0]))
    if limit:
        ranked = ranked[:limit]
    return [TagPair(shown[a], shown[b], n, round(n / (exact[a] + exact[b] - n), 4))
            for (a, b), n in ranked]


class TagsParams(Record):
    tree: Annotated[bool, Param(help="the tag hierarchy", tool="")] = False
    stats: Annotated[bool, Param(help="pairs of tags used together",
                                 tool="Pairs of tags used together.")] = False
    limit: Annotated[int, Param(ge=0, le=MAX_LIMIT,
                                help="pairs with --stats, 0 = all (default: 50)",
                                tool="stats pairs (0: all).")] = 50


def _tags(s: Session, p: TagsParams) -> TagsAnswer:
    return tags_answer(s.view(), tree=p.tree, stats=p.stats, limit=p.limit)


def _tag_lines(a: TagsAnswer) -> list[str]:
    out: list[str] = []
    if a.tree is not None:
        stack: list[tuple[TagNode, int]] = [(n, 0) for n in reversed(a.tree)]
        while stack:  # depth first, in order, without recursion
            n, depth = stack.pop()
            out.append(f"{'  ' * depth}{n.name}  {n.total}"
                       + (f" ({n.count} exact)" if n.count != n.total else ""))
            stack.extend((c, depth + 1) for c in reversed(n.children))
    else:
        out.extend(f"{t.total:>6} {t.count:>6}  #{t.tag}" for t in a.tags)
    if a.cooccurrence is not None:
        out.append("tags used together:")
        out.extend(f"{p.count:>6}  #{p.a} + #{p.b}" for p in a.cooccurrence)
    return out if a.tags else [f"no tags in the {a.notes} notes", *out]


TAGS = Query(
    "tags", ("tags",), help="tag counts, the tag tree and co-occurring tags",
    description="count = notes with the tag itself, total = with it or a tag below it. "
                "Exit 0 tags found, 1 no tags, 2 error.",
    fold=("tags", "list"),
    params=TagsParams, run=_tags, text=_tag_lines, found=lambda a: bool(a.tags),
    lists=("tags", "tree", "cooccurrence"))


class NotesParams(Record):
    tags: Tags = ()
    any_tag: Annotated[bool, Param(
        flag="--any", help="notes with any of the tags (default: all of them)",
        tool="Any of the tags, not all.")] = False
    domain: Domain = None


def _notes(s: Session, p: NotesParams) -> NotesAnswer:
    return notes_answer(s.view(), tags=list(p.tags), any_tag=p.any_tag,
                        domain=none_if_blank(p.domain))


QUERIES = [TAGS, Query(
    "notes", ("notes",), help="notes with given tags and domain",
    description="Notes having every --tag (a tag matches the tags below it: rust matches "
                "rust/async), or any of them with --any. Exit 0 notes found, 1 none, 2 "
                "error.",
    fold=("tags", "notes"),
    params=NotesParams, run=_notes,
    text=lambda a: [f"{n.path}  " + " ".join(f"#{t}" for t in n.tags) for n in a.notes],
    found=lambda a: bool(a.notes), lists=("notes",))]
