"""`kbase gaps`: what the vault talks about but has no note for.

Three kinds, each its own ranked list: notes to write (link targets that resolve to
nothing, spellings of one target grouped as `notestore.target_key` does), ranked by how
many notes link there, then how many links; concepts that recur across notes but match
no title, alias or heading (`query.undocumented`), ranked by spread; and attachments
links name that are missing (`linkgraph.gap_kind`), ranked as notes are. Each comes with
where it appears and the sentence around it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kbase_ci.index.layout import UNRESOLVED_FILE
from kbase_ci.parse.linksyntax import link_from_raw
from kbase_ci.parse.outline import note_text, split_lines
from kbase_ci.query.filters import domain_key
from kbase_ci.query.links import sentence_at
from kbase_ci.query.undocumented import undocumented
from kbase_ci.query.view import QueryView
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


KINDS = ("note", "concept", "attachment")
"""`--kind` values, in the order the answer lists them: notes to write first (what a
reader follows a link to and finds missing), then concepts, then missing attachments
(a file someone forgot to commit is a fix, not something to write)."""
LISTS = {"note": "unwritten", "concept": "concepts", "attachment": "attachments"}


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


def gaps_answer(view: QueryView, *, kinds: Iterable[str] = KINDS, domain: str | None = None,
                limit: int = 20, min_notes: int = 3, concise: bool = False) -> dict[str, Any]:
    """JSON-ready answer: for each kind asked for, its list (`unwritten[]`, `concepts[]`,
    `attachments[]`) and its count in `counts`; `index` (`concise`: without where each
    is mentioned)."""
    asked = [k for k in KINDS if k in set(kinds)]
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

    def groups(top: list[tuple[int, int, str, list[Any]]]) -> list[dict[str, Any]]:
        return [{
            "target": rows[0][0], "key": key, "notes": -notes, "references": -refs,
            "referrers": [{**r[1].to_json(),
                           "sentence": _sentence(lines, r[1].path, r[1].line, r[1].col)}
                          for r in rows[:MAX_PLACES]],
            "more": max(0, len(rows) - MAX_PLACES),
        } for notes, refs, key, rows in top]

    answer: dict[str, Any] = {"kinds": asked, "domain": domain, "min_notes": min_notes,
                              "limit": limit, "counts": {}}
    for kind in asked:
        if kind == "concept":
            answer["counts"]["concepts"] = len(concepts)
            answer["concepts"] = [{
                "name": c.name, "key": c.key, "kind": c.kind, "notes": c.spread,
                "places": [{"path": p.path, "line": p.line, "col": p.col,
                            "sentence": _sentence(lines, p.path, p.line, p.col)}
                           for p in c.places[:MAX_PLACES]],
                "more": max(0, c.spread - MAX_PLACES),
            } for c in shown]
        else:
            answer["counts"][LISTS[kind]] = targets["note" if kind == "note" else "file"][0]
            answer[LISTS[kind]] = groups(tops[kind])
    if concise:  # what to write and how much it is wanted, not where it is mentioned
        for kind in asked:
            fields = ("name", "notes") if kind == "concept" else ("target", "notes",
                                                                  "references")
            answer[LISTS[kind]] = [{k: g[k] for k in fields} for g in answer[LISTS[kind]]]
    answer["index"] = view.index_info()
    return answer
