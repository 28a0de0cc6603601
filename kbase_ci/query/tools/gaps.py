"""`gaps`: notes to write, undocumented recurring concepts, missing attachments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, TypeAlias

from kbase_ci.query.choices import GAP_KINDS
from kbase_ci.query.tools.spec import MAX_LIMIT, Domain, Param, Query, Session, none_if_blank
from kbase_ci.typedjson import Record

if TYPE_CHECKING:
    from kbase_ci.query.gaps import (
        ConceptGap,
        ConciseConcept,
        ConciseTarget,
        GapsAnswer,
        Place,
        Referrer,
        Target,
    )

    Gap: TypeAlias = Target | ConciseTarget | ConceptGap | ConciseConcept

_TITLES = {"note": "notes to write (unresolved link targets)",
           "concept": "undocumented concepts", "attachment": "missing attachments"}


class GapsParams(Record):
    kinds: Annotated[tuple[str, ...], Param(
        flag="--kind", choices=GAP_KINDS,
        help="only this kind of gap; repeatable (default: all three, in this order: note, "
             "concept, attachment)",
        tool="")
    ] = ()
    domain: Domain = None
    limit: Annotated[int, Param(ge=1, le=MAX_LIMIT, tool_le=100, metavar="N",
                                help="entries per list (default: %(default)s)",
                                tool="")] = 20
    min_notes: Annotated[int, Param(ge=1, le=MAX_LIMIT, metavar="N",
                                    help="notes a concept must appear in (default: "
                                         "%(default)s)",
                                    tool="Least notes per concept.")] = 3
    concise: Annotated[bool, Param(
        help="targets and concepts with their counts, not where they are",
        tool="Counts only, not where.")] = False


def _run(s: Session, p: GapsParams) -> GapsAnswer:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.gaps import gaps_answer

    return gaps_answer(s.view(), kinds=p.kinds or GAP_KINDS, domain=none_if_blank(p.domain),
                       limit=p.limit, min_notes=p.min_notes, concise=p.concise)


def _lists(a: GapsAnswer) -> list[tuple[str, Sequence[Gap]]]:
    """(kind, its list) for each kind asked for."""
    got = {"note": a.unwritten, "concept": a.concepts, "attachment": a.attachments}
    return [(k, got[k] or []) for k in a.kinds]


def _lines(a: GapsAnswer) -> list[str]:
    # Lazy: `kbase --help` loads every declaration, not the answers' code
    from kbase_ci.query.gaps import LISTS, ConceptGap, ConciseConcept, Target

    lines: list[str] = []
    places: Sequence[Place | Referrer]
    for kind, gaps in _lists(a):
        title = _TITLES[kind] + (f" (in >= {a.min_notes} notes)" if kind == "concept" else "")
        lines.append(f"{title}: {a.counts[LISTS[kind]]}")
        for g in gaps:
            if isinstance(g, ConceptGap | ConciseConcept):
                lines.append(f"  {g.name}  ({_count(g.notes, 'note')})")
                places = g.places if isinstance(g, ConceptGap) else []
            else:
                lines.append(f"  {g.target}  ({_count(g.notes, 'note')}, "
                             f"{_count(g.references, 'link')})")
                places = g.referrers if isinstance(g, Target) else []
            lines += [f"    {p.path}:{p.line}: {p.sentence}" for p in places]
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


QUERIES = [Query(
    "gaps", ("gaps",),
    help="notes worth writing: unwritten link targets, undocumented concepts, missing "
         "attachments",
    description="Three ranked lists: notes that links point to but nobody wrote (most "
                "referring notes first, then most links), terms (backticked identifiers, "
                "capitalised names) that recur across notes but match no title, alias or "
                "heading (widest spread first), and attachments links name that are "
                "missing. Exit 0 gaps found, 1 none, 2 usage error.",
    tool="What to write next: linked notes not written yet, concepts without a note, missing "
         "attachments, with where each is mentioned.",
    when="what to write next: notes to write first, then concepts without a note, then "
         "missing attachments",
    params=GapsParams, run=_run, text=_lines,
    found=lambda a: any(gaps for _, gaps in _lists(a)),
    # notes to write first, then concepts, then where each is named, then missing
    # attachments (docs/gaps.md)
    lists=("unwritten", "concepts", "unwritten.referrers", "concepts.places",
           "attachments"))]
