"""`tags`: notes per tag and per branch of the tag tree, and tags used together; `tags
suggest NOTE`: tags a note probably lacks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.spec import MAX_LIMIT, Note, Param, Query, Session
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.tagsuggest import SuggestAnswer
    from kbase_ci.query.tagtree import TagNode, TagsAnswer


class TagsParams(Record):
    tree: Annotated[bool, Param(help="the tag hierarchy", tool="")] = False
    stats: Annotated[bool, Param(help="pairs of tags used together",
                                 tool="Pairs of tags used together.")] = False
    limit: Annotated[int, Param(ge=0, le=MAX_LIMIT,
                                help="pairs with --stats, 0 = all (default: 50)",
                                tool="stats pairs (0: all).")] = 50


def _tags(s: Session, p: TagsParams) -> TagsAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.tagtree import tags_answer

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


class SuggestParams(Record):
    note: Note
    limit: Annotated[int, Param(ge=1, le=MAX_LIMIT, tool_le=100, help="most tags (default: 5)",
                                tool="")] = 5


def _suggest(s: Session, p: SuggestParams) -> SuggestAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.tagsuggest import suggest_answer

    return suggest_answer(s.view(), p.note, limit=p.limit)


QUERIES = [Query(
    "tags", ("tags",), help="tag counts, the tag tree and co-occurring tags",
    description="count = notes with the tag itself, total = with it or a tag below it. "
                "Exit 0 tags found, 1 no tags, 2 error.",
    tool="The tags with their note counts (`tree`: hierarchy, `stats`: tags used together), "
         "before filtering by tag.",
    when="the tag vocabulary",
    params=TagsParams, run=_tags, text=_tag_lines, found=lambda a: bool(a.tags),
    lists=("tags", "tree", "cooccurrence")), Query(
    "tags_suggest", ("tags", "suggest"),
    help="tags a note probably lacks, from similar notes",
    description="Tags of the notes most like NOTE (similar notes from the index's vectors, "
                "and the notes it links with) that NOTE lacks, scored by how many of them "
                "carry the tag and how rare it is. Exit 0 suggestions, 1 none, 2 no such "
                "note.",
    tool="Tags a note probably lacks, voted by the notes most like it and weighed by rarity.",
    when="tags a note lacks, from similar and linked notes",
    params=SuggestParams, run=_suggest,
    text=lambda a: [f"#{s.tag}  {s.score}  (from {', '.join(s.sources)})"
                    for s in a.suggestions]
    or [f"no tag to suggest for {a.note} (from {a.neighbours} similar or linked notes)"],
    found=lambda a: bool(a.suggestions), lists=("suggestions", "tags"))]
