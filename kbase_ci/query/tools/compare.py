"""`compare`: two notes or domains side by side on a concept, links and tags."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from kbase_ci.query.tools.spec import MAX_LIMIT, Param, Query, Session, none_if_blank
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.compare import CompareAnswer, Side


class CompareParams(Record):
    a: Annotated[str, Param(positional=True, metavar="A", tool="A note or a domain.")]
    b: Annotated[str, Param(positional=True, metavar="B", tool="Another note or domain.")]
    concept: Annotated[str | None, Param(metavar="C", help="where each side discusses C",
                                         tool="A term: where each side discusses it.")] = None
    limit: Annotated[int, Param(ge=1, le=MAX_LIMIT, tool_le=100, metavar="N",
                                help="passages per side (default: %(default)s)",
                                tool="Passages per side.")] = 10


def _run(s: Session, p: CompareParams) -> CompareAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.compare import compare_answer

    return compare_answer(s.view(), p.a, p.b, concept=none_if_blank(p.concept),
                          limit=p.limit)


def _side(label: str, side: Side, concept: str | None) -> list[str]:
    lines = [f"{label}: {side.name} ({side.kind}, {side.notes} notes, {side.links} links)"]
    if concept is not None:
        lines.append(f"  {concept}: {side.mentions} lines")
        lines += [f"    {x.path}:{x.line}: {x.snippet}" for x in side.passages]
    return lines


def _lines(a: CompareAnswer) -> list[str]:
    return [*_side("A", a.a, a.concept), *_side("B", a.b, a.concept),
            "shared links: " + ", ".join(a.shared_links),
            "only A links: " + ", ".join(a.only_a_links),
            "only B links: " + ", ".join(a.only_b_links),
            "shared tags: " + ", ".join(a.shared_tags),
            "only A tags: " + ", ".join(a.only_a_tags),
            "only B tags: " + ", ".join(a.only_b_tags)]


def _found(a: CompareAnswer) -> bool:
    if a.concept is not None:
        return bool(a.a.mentions or a.b.mentions)
    return bool(a.a.links or a.b.links or a.a.tags or a.b.tags)


QUERIES = [Query(
    "compare", ("compare",), help="two notes or domains side by side on a concept",
    description="A and B are notes (path, title or alias) or domains. With --concept: the "
                "lines of each naming C, with snippets; always: the links and tags both "
                "share and those only one has. Exit 0 found, 1 C in neither (or nothing "
                "to compare), 2 no such note or domain.",
    tool="Compare two notes or domains: where each discusses a concept, shared and "
         "distinct links and tags.",
    when="how two notes or domains differ on a topic",
    params=CompareParams, run=_run, text=_lines, found=_found,
    lists=("a.passages", "b.passages", "shared_links", "shared_tags"))]
