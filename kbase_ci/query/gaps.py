"""`kbase gaps`: what the vault talks about but has no note for.

Two lists: link targets that resolve to nothing (spellings of one target grouped as
`notestore.target_key` does), ranked by how many notes link there; and concepts that recur
across notes but match no title, alias or heading (`query.concepts`), ranked by spread.
Each comes with where it appears and the sentence around it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kbase_ci.index.layout import LINK_FIELDS, UNRESOLVED_FILE
from kbase_ci.parse.linksyntax import link_from_raw
from kbase_ci.parse.outline import note_text, split_lines
from kbase_ci.query.filters import domain_key
from kbase_ci.query.links import sentence_at
from kbase_ci.query.undocumented import undocumented
from kbase_ci.query.view import QueryView
from kbase_ci.vault.globs import any_match
from kbase_ci.vault.linkgraph import GapKind, GapSource
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
    isrc, iline, icol, iraw, istyle, istatus = (LINK_FIELDS.index(k) for k in (
        "source", "line", "col", "raw", "style", "status"))
    found: list[tuple[str, str, int, int, str, str]] = []
    for target, ids in reader.json(UNRESOLVED_FILE).items():
        for lid in ids:
            row = reader.link_row(lid)
            src = view.paths[row[isrc]]
            if row[istatus] == "unresolved" and src not in redone:
                found.append((target, src, row[iline], row[icol], row[iraw], row[istyle]))
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
        name = target.rsplit("/", 1)[-1]
        kind: GapKind = "file" if "." in name and not name.lower().endswith(".md") else "note"
        out.append((target, GapSource(src, line, col, raw), kind))
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


def gaps_answer(view: QueryView, *, domain: str | None = None, limit: int = 20,
                min_notes: int = 3, concise: bool = False) -> dict[str, Any]:
    """JSON-ready answer: `unresolved[]`, `concepts[]`, `counts`, `index` (`concise`:
    without where each is mentioned)."""
    domain = domain_key(view, domain)
    keep = _domains(view, domain)
    grouped: dict[str, list[tuple[str, GapSource, GapKind]]] = {}
    for target, src, kind in unresolved_links(view):
        if keep is None or keep.get(src.path, False):
            grouped.setdefault(target_key(target), []).append((target, src, kind))
    ranked = []
    for key, rows in grouped.items():
        rows.sort(key=lambda r: (r[1].path, r[1].line, r[1].col))
        ranked.append((-len({r[1].path for r in rows}), -len(rows), key, rows))
    ranked.sort(key=lambda r: r[:3])
    top = ranked[:limit]
    concepts = undocumented(view, min_notes=min_notes, max_places=MAX_PLACES, keep=keep)
    shown = concepts[:limit]
    lines = {} if concise else _lines(view, [*(r[1].path for t in top for r in t[3][:MAX_PLACES]),
                          *(p.path for c in shown for p in c.places[:MAX_PLACES])])
    unresolved = [{
        "target": rows[0][0], "key": key, "kind": rows[0][2], "notes": -notes,
        "references": -refs,
        "referrers": [{**r[1].to_json(), "sentence": _sentence(lines, r[1].path, r[1].line,
                                                                r[1].col)}
                      for r in rows[:MAX_PLACES]],
        "more": max(0, len(rows) - MAX_PLACES),
    } for notes, refs, key, rows in top]
    concept_json = [{
        "name": c.name, "key": c.key, "kind": c.kind, "notes": c.spread,
        "places": [{"path": p.path, "line": p.line, "col": p.col,
                    "sentence": _sentence(lines, p.path, p.line, p.col)}
                   for p in c.places[:MAX_PLACES]],
        "more": max(0, c.spread - MAX_PLACES),
    } for c in shown]
    if concise:
        unresolved = [{k: g[k] for k in ("target", "notes", "references")} for g in unresolved]
        concept_json = [{k: c[k] for k in ("name", "notes")} for c in concept_json]
    return {"domain": domain, "min_notes": min_notes, "limit": limit,
            "counts": {"unresolved": len(ranked), "concepts": len(concepts)},
            "unresolved": unresolved, "concepts": concept_json, "index": view.index_info()}
