"""Links and backlinks of one note, each with its line and the sentence it sits in; links
to URLs apart (`external`), so `path: null` always means a note not written yet (or a
target outside the vault or the scope, as `status` says)."""

from __future__ import annotations

import re
from typing import Any

from kbase_ci.errors import UsageError
from kbase_ci.parse.linksyntax import link_from_raw
from kbase_ci.parse.outline import split_lines
from kbase_ci.query.view import LinkInfo, QueryView

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_MAX_SENTENCE = 300


def sentence_at(line_text: str, col: int) -> str:
    """The sentence of `line_text` holding column `col` (1-based, code points)."""
    start = 0
    for piece in _SENTENCE_END.split(line_text):
        pos = line_text.find(piece, start)
        if pos <= col - 1 < pos + len(piece) + 1:
            return _trim(piece.strip())
        start = pos + len(piece)
    return _trim(line_text.strip())


def _trim(text: str) -> str:
    text = text.lstrip("-*+> ").strip()
    return text if len(text) <= _MAX_SENTENCE else text[:_MAX_SENTENCE - 1] + "\u2026"


def link_records(view: QueryView, links: list[LinkInfo], *, side: str) -> list[dict[str, Any]]:
    """JSON-ready links. `side` is "target" (outgoing) or "source" (backlinks)."""
    texts = view.texts(lk.source for lk in links)
    lines: dict[str, list[str]] = {}
    out: list[dict[str, Any]] = []
    for lk in links:
        if lk.source not in lines:
            lines[lk.source] = split_lines(texts[lk.source])
        text = lines[lk.source]
        line_text = text[lk.line - 1] if 0 < lk.line <= len(text) else ""
        rec: dict[str, Any] = {
            "line": lk.line, "col": lk.col, "raw": lk.raw, "subpath": lk.subpath,
            "status": lk.status, "embed": lk.embed, "anchor_found": lk.anchor_found,
            "sentence": sentence_at(line_text, lk.col),
        }
        if side == "target":
            rec = {"path": lk.target if lk.status == "ok" else None, **rec}
        else:
            rec = {"path": lk.source, **rec}
        out.append(rec)
    return out


def split_external(links: list[LinkInfo]) -> tuple[list[LinkInfo], list[LinkInfo]]:
    """(links into the vault or meant to be, links to URLs): a URL is no note, so it never
    sits among the links with `path: null` (which are notes not written yet)."""
    inside = [lk for lk in links if lk.status != "external"]
    return inside, [lk for lk in links if lk.status == "external"]


def external_records(view: QueryView, links: list[LinkInfo]) -> list[dict[str, Any]]:
    """JSON-ready links to URLs (`scheme:` destinations): `{url, line, col, raw, embed,
    sentence}`, in the order written."""
    out = []
    for rec, lk in zip(link_records(view, links, side="target"), links, strict=True):
        try:
            url = link_from_raw(lk.raw).target
        except UsageError:  # a stored raw link always parses; keep the answer if not
            url = lk.raw
        out.append({"url": url, "line": rec["line"], "col": rec["col"], "raw": rec["raw"],
                    "embed": rec["embed"], "sentence": rec["sentence"]})
    return out


def links_answer(view: QueryView, path: str) -> dict[str, Any]:
    inside, external = split_external(view.outgoing(path))
    return {"note": path, "links": link_records(view, inside, side="target"),
            "external": external_records(view, external), "index": view.index_info()}


def backlinks_answer(view: QueryView, path: str) -> dict[str, Any]:
    return {"note": path, "backlinks": link_records(view, view.backlinks(path), side="source"),
            "index": view.index_info()}
