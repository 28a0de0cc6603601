"""Escaping untrusted text for each place it lands: one function per sink.

Note names, headings, link text, `.kbase.yml` keys and the messages (config errors
included) built from them are written by whoever edits the vault, including a fork's
PR. Sinks and their layer:
- a terminal or a CI log (`terminal_text`): no escape sequence, CR or LF, no bidi
  override, never a line starting `::` (GitHub Actions reads that as a workflow command);
- a workflow command's data or property (`command_data`, `command_property`);
- a plain log line inside `stop_commands` (`log_text`);
- the PR comment and step summary (`md_text`, `md_url`): no Markdown, HTML, pinged
  `@user`, cross-referenced `#123` or `GH-123`, and no clickable URL (`https://...`, `www.`);
- a Mermaid label (`mermaid_label`);
- SARIF is JSON (json.dumps escapes it) with percent-encoded URIs (report.sarif).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

ZWJ = "\u200d"
ZWSP = "\u200b"
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


# GitHub turns `https://x`, `www.x` (any case) into links in comments; a zero-width space
# inside the scheme or after `www` keeps the text and drops the link.
_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9]:)(?=//)|(?<=www)(?=\.)")


# GitHub also cross-references `GH-123` (any case) to an issue of the repository.
_GH_REF = re.compile(r"(?i)(?<![a-z0-9])gh(?=-\d)")


def md_text(s: str) -> str:
    """`s` as literal text in GitHub Markdown (also inside table cells)."""
    out = s.translate(_MD_TABLE)
    if "-" in out:
        out = _GH_REF.sub(lambda m: m.group() + ZWSP, out)
    return _AUTOLINK.sub(ZWSP, out) if ("//" in out or "." in out) else out


def md_url(base: str, path: str) -> str:
    """`base` + a repository path, percent-encoded so nothing in it ends the URL (a
    non-UTF-8 name, which git gives as surrogate escapes, as its own bytes)."""
    from urllib.parse import quote  # only report writers pay for this import

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


_TERMINAL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
                       "\u2028\u2029\ufeff]")
_TERMINAL_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
                             "\u2028\u2029\ufeff]")


_COMMAND = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
                      "\u2028\u2029\ufeff]")
"""What a workflow command's message shows as `\\xNN`: `_TERMINAL_LINES` but CR, which the
runner's own encoding (`%0D`) carries."""


def _shown(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def terminal_text(s: str, *, lines: bool = False) -> str:
    """`s` inert on a terminal or a CI log: control characters (escape sequences, CR, LF)
    and bidi overrides shown as `\\xNN` / `\\uNNNN`, and no line that starts with `::` (a
    workflow command). `lines`: keep LF, for text printed as several lines."""
    out = (_TERMINAL_LINES if lines else _TERMINAL).sub(_shown, s)
    if "::" not in out:
        return out
    return "\n".join("./" + ln if ln.lstrip().startswith("::") else ln
                     for ln in out.split("\n"))


def command_data(s: str) -> str:
    """The message of a workflow command (`::error ...::MESSAGE`): escape sequences,
    other control characters and bidi overrides shown as `\\xNN` (an annotation is shown
    in the log and on the PR: a note's text must not colour, move or hide it), `%`, CR
    and LF encoded as the runner wants them."""
    shown = _COMMAND.sub(_shown, s)
    return shown.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def command_property(s: str) -> str:
    """A property value of a workflow command (`file=`, `title=`)."""
    return command_data(s).replace(":", "%3A").replace(",", "%2C")


def log_text(s: str) -> str:
    """`s` on one log line that the runner will not read as a workflow command."""
    line = "".join(_clean(s))
    return line.replace("::", ":" + "\u200b" + ":")


@contextmanager
def stop_commands(out: TextIO) -> Iterator[None]:
    """Suspend workflow-command processing for everything written inside."""
    import secrets  # only CI runs pay for this import

    token = secrets.token_hex(16)
    out.write(f"::stop-commands::{token}\n")
    try:
        yield
    finally:
        out.write(f"::{token}::\n")
