"""Links and backlinks of one note, each with its line and the sentence it sits in."""

from __future__ import annotations

import re
from typing import Any

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


def links_answer(view: QueryView, path: str) -> dict[str, Any]:
    return {"note": path, "links": link_records(view, view.outgoing(path), side="target"),
            "index": view.index_info()}


def backlinks_answer(view: QueryView, path: str, *, concise: bool = False) -> dict[str, Any]:
    """Who links to `path`, with line and sentence (`concise`: where only)."""
    if concise:
        links = [{"path": lk.source, "line": lk.line} for lk in view.backlinks(path)]
        return {"note": path, "backlinks": links, "index": view.index_info()}
    return {"note": path, "backlinks": link_records(view, view.backlinks(path), side="source"),
            "index": view.index_info()}
