"""Escaping untrusted note text for each place it lands.

Note names, headings, link text and messages built from them are written by whoever
edits the vault, including a fork's PR. In the PR comment they must not become
Markdown, HTML, a pinged `@user` or a cross-referenced `#123`; in a Mermaid label they
must not close the label or the code fence; in the job log they must not become a
workflow command (`::add-mask::`, `::error ...::`).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO
from urllib.parse import quote

ZWJ = "\u200d"
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
# Every ASCII punctuation character that means something to CommonMark or GFM.
_MD_PUNCT = set("\\`*_{}[]()#!|~$")
# Bidi overrides and isolates reorder what a reviewer sees (Trojan Source); line and
# paragraph separators break table rows.
_INVISIBLE = {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028,
                               0x2029, 0xFEFF)}


def _clean(s: str) -> Iterator[str]:
    for ch in s:
        if ch in _INVISIBLE:
            continue
        yield " " if ord(ch) < 32 or ord(ch) == 127 else ch


def _md_table() -> dict[int, str]:
    table = {c: " " for c in (*range(32), 127)}
    table.update({ord(ch): "" for ch in _INVISIBLE})
    table.update({ord(ch): "\\" + ch for ch in _MD_PUNCT})
    table.update({ord(ch): rep for ch, rep in _HTML.items()})
    # Mentions and issue references are matched on the rendered text, after Markdown
    # escapes are gone; a zero-width joiner after `@` and `#` breaks the match.
    table[ord("@")] = "@" + ZWJ
    table[ord("#")] = "\\#" + ZWJ
    return table


_MD_TABLE = _md_table()


def md_text(s: str) -> str:
    """`s` as literal text in GitHub Markdown (also inside table cells)."""
    return s.translate(_MD_TABLE)


def md_url(base: str, path: str) -> str:
    """`base` + a repository path, percent-encoded so nothing in it ends the URL (a
    non-UTF-8 name, which git gives as surrogate escapes, as its own bytes)."""
    return base + quote(path, safe="/", errors="surrogateescape")


def mermaid_label(s: str) -> str:
    """Text for a quoted Mermaid node label: entity codes for what Mermaid parses."""
    out: list[str] = []
    for ch in _clean(s):
        if ch.isalnum() or ch in " ./-_":
            out.append(ch)
        else:
            out.append(f"#{ord(ch)};")
    return "".join(out)


def log_text(s: str) -> str:
    """`s` on one log line that the runner will not read as a workflow command."""
    line = "".join(_clean(s))
    return line.replace("::", ":" + "\u200b" + ":")


@contextmanager
def stop_commands(out: TextIO) -> Iterator[None]:
    """Suspend workflow-command processing for everything written inside."""
    token = secrets.token_hex(16)
    out.write(f"::stop-commands::{token}\n")
    try:
        yield
    finally:
        out.write(f"::{token}::\n")
