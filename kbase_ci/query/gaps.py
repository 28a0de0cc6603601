"""`kbase gaps`: what the vault talks about but has no note for.

Three kinds, each its own ranked list: notes to write (link targets that resolve to
nothing, spellings of one target grouped as `notestore.target_key` does), ranked by how
many notes link there, then how many links; concepts that recur across notes but match
no title, alias or heading (`query.undocumented`), ranked by spread; and attachments
links name that are missing (`linkgraph.gap_kind`), ranked as notes are. Each comes with
where it appears and the sentence around it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Annotated, Any, TypeAlias

from kbase_ci.index.layout import UNRESOLVED_FILE
from kbase_ci.parse.linksyntax import link_from_raw
from kbase_ci.parse.outline import note_text, split_lines
from kbase_ci.query.answer import IndexInfo
from kbase_ci.query.choices import GAP_KINDS
from kbase_ci.query.filters import domain_key
from kbase_ci.query.snippets import sentence_at
from kbase_ci.query.spec import MAX_LIMIT, Domain, Param, Query, Session, none_if_blank
from kbase_ci.query.undocumented import undocumented
from kbase_ci.query.view import QueryView
from kbase_ci.typedjson import Record, json_field
from kbase_ci.vault.globs import any_match
from kbase_ci.vault.linkgraph import GapKind, GapSource, gap_kind
from kbase_ci.vault.notestore import target_key

MAX_PLACES = 10
"""Referrers (per target) and places (per concept) listed; `more` counts the rest."""


def unresolved_links(view: QueryView) -> list[tuple[str, GapSource, GapKind]]:
    """(target as written, where, kind) of every unresolved link of the current vault,
    with the overlay applied; targets `links.ignore_targets` ignores are left out."""
    cfg = view.vault.config.links
    reader = view.source.reader
    redone = {*view.fresh.changed, *view.fresh.added, *view.fresh.deleted,
              *view.fresh.relinked}
    found: list[tuple[str, str, int, int, str, str]] = []
    for target, ids in reader.json(UNRESOLVED_FILE).items():
        for lid in ids:
            row = reader.link_row(lid)
            src = view.paths[row.source]
            if row.status == "unresolved" and src not in redone:
                found.append((target, src, row.line, row.col, row.raw, row.style))
    for path in sorted({*view.fresh.changed, *view.fresh.added, *view.fresh.relinked}):
        for lk in view.outgoing(path):
            if lk.status == "unresolved":
                link = link_from_raw(lk.raw)
                found.append((link.target, path, lk.line, lk.col, lk.raw, link.style))
    out: list[tuple[str, GapSource, GapKind]] = []
    for target, src, line, col, raw, style in found:
        if (style == "markdown" and not cfg.markdown_links) or (
                cfg.ignore_targets and any_match(cfg.ignore_targets, target)):
            continue
        out.append((target, GapSource(src, line, col, raw), gap_kind(target)))
    return out


def _lines(view: QueryView, paths: Iterable[str]) -> dict[str, list[str]]:
    files = [nf for p in sorted(set(paths)) if (nf := view.vault.note(p)) is not None]
    return {p: split_lines(note_text(data)) for p, data in view.vault.read(files).items()}


def _sentence(lines: dict[str, list[str]], path: str, line: int, col: int) -> str:
    text = lines.get(path, [])
    return sentence_at(text[line - 1] if 0 < line <= len(text) else "", col)


def _domains(view: QueryView, domain: str | None) -> dict[str, bool] | None:
    if domain is None:
        return None
    return {p: info.domain == domain for p, info in view.notes.items()}


LISTS = dict(zip(GAP_KINDS, ("unwritten", "concepts", "attachments"), strict=True))
"""Each kind's list in the answer (its key, and its count's in `counts`)."""


class Referrer(Record):
    path: str
    line: int
    col: int
    raw: str
    sentence: str


class Target(Record):
    """A link target nobody wrote (spellings of one target grouped under `key`)."""

    target: str
    key: str
    notes: int
    references: int
    referrers: list[Referrer]
    more: int
    """Referrers past the first `MAX_PLACES`."""


class Place(Record):
    path: str
    line: int
    col: int
    sentence: str


class ConceptGap(Record):
    name: str
    key: str
    kind: str
    notes: int
    places: list[Place]
    more: int


class ConciseTarget(Record):
    target: str
    notes: int
    references: int


class ConciseConcept(Record):
    name: str
    notes: int


class GapsAnswer(Record):
    """A list for each kind asked for, and its count in `counts`; `concise`: without
    where each is mentioned."""

    kinds: list[str] = json_field(keep=True)
    domain: str | None
    min_notes: int
    limit: int
    counts: dict[str, int]
    unwritten: list[Target] | list[ConciseTarget] | None = json_field(omit=True)
    concepts: list[ConceptGap] | list[ConciseConcept] | None = json_field(omit=True)
    attachments: list[Target] | list[ConciseTarget] | None = json_field(omit=True)
    index: IndexInfo


def _targets(view: QueryView, keep: dict[str, bool] | None, limit: int
             ) -> dict[str, tuple[int, list[tuple[int, int, str, list[Any]]]]]:
    """Per gap kind (`note`, `file`): the number of target groups, and the first `limit`
    groups ranked by referring notes, then links, then key."""
    grouped: dict[GapKind, dict[str, list[tuple[str, GapSource, GapKind]]]] = {
        "note": {}, "file": {}}
    for target, src, kind in unresolved_links(view):
        if keep is None or keep.get(src.path, False):
            grouped[kind].setdefault(target_key(target), []).append((target, src, kind))
    out: dict[str, tuple[int, list[tuple[int, int, str, list[Any]]]]] = {}
    for kind, groups in grouped.items():
        ranked: list[tuple[int, int, str, list[Any]]] = []
        for key, rows in groups.items():
            rows.sort(key=lambda r: (r[1].path, r[1].line, r[1].col))
            ranked.append((-len({r[1].path for r in rows}), -len(rows), key, rows))
        ranked.sort(key=lambda r: r[:3])
        out[kind] = (len(ranked), ranked[:limit])
    return out


def gaps_answer(view: QueryView, *, kinds: Iterable[str] = GAP_KINDS,
                domain: str | None = None, limit: int = 20, min_notes: int = 3,
                concise: bool = False) -> GapsAnswer:
    """The kinds asked for (of `GAP_KINDS`), in that order."""
    asked = [k for k in GAP_KINDS if k in set(kinds)]
    domain = domain_key(view, domain)
    keep = _domains(view, domain)
    targets = _targets(view, keep, limit) if {"note", "attachment"} & set(asked) else {}
    concepts = undocumented(view, min_notes=min_notes, max_places=MAX_PLACES, keep=keep) \
        if "concept" in asked else []
    shown = concepts[:limit]
    tops = {"note": targets.get("note", (0, []))[1] if "note" in asked else [],
            "attachment": targets.get("file", (0, []))[1] if "attachment" in asked else []}
    lines = {} if concise else _lines(
        view, [*(r[1].path for top in tops.values() for t in top for r in t[3][:MAX_PLACES]),
               *(p.path for c in shown for p in c.places[:MAX_PLACES])])

    def groups(top: list[tuple[int, int, str, list[Any]]]
               ) -> list[Target] | list[ConciseTarget]:
        if concise:  # what to write and how much it is wanted, not where it is mentioned
            return [ConciseTarget(rows[0][0], -notes, -refs) for notes, refs, _, rows in top]
        return [Target(rows[0][0], key, -notes, -refs,
                       [Referrer(r[1].path, r[1].line, r[1].col, r[1].raw,
                                 _sentence(lines, r[1].path, r[1].line, r[1].col))
                        for r in rows[:MAX_PLACES]],
                       max(0, len(rows) - MAX_PLACES))
                for notes, refs, key, rows in top]

    def concept_list() -> list[ConceptGap] | list[ConciseConcept]:
        if concise:
            return [ConciseConcept(c.name, c.spread) for c in shown]
        return [ConceptGap(c.name, c.key, c.kind, c.spread,
                           [Place(p.path, p.line, p.col,
                                  _sentence(lines, p.path, p.line, p.col))
                            for p in c.places[:MAX_PLACES]],
                           max(0, c.spread - MAX_PLACES)) for c in shown]

    counts: dict[str, int] = {}
    for kind in asked:
        counts[LISTS[kind]] = len(concepts) if kind == "concept" else \
            targets["note" if kind == "note" else "file"][0]
    return GapsAnswer(asked, domain, min_notes, limit, counts,
                      groups(tops["note"]) if "note" in asked else None,
                      concept_list() if "concept" in asked else None,
                      groups(tops["attachment"]) if "attachment" in asked else None,
                      view.index_info())


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
    return gaps_answer(s.view(), kinds=p.kinds or GAP_KINDS, domain=none_if_blank(p.domain),
                       limit=p.limit, min_notes=p.min_notes, concise=p.concise)


def _lists(a: GapsAnswer) -> list[tuple[str, Sequence[Gap]]]:
    """(kind, its list) for each kind asked for."""
    got = {"note": a.unwritten, "concept": a.concepts, "attachment": a.attachments}
    return [(k, got[k] or []) for k in a.kinds]


def _gap_lines(a: GapsAnswer) -> list[str]:
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
    params=GapsParams, run=_run, text=_gap_lines,
    found=lambda a: any(gaps for _, gaps in _lists(a)),
    # notes to write first, then concepts, then where each is named, then missing
    # attachments (docs/gaps.md)
    lists=("unwritten", "concepts", "unwritten.referrers", "concepts.places",
           "attachments"))]
