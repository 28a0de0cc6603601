"""A link this commit breaks (`Breakage`), and the name key links are matched on.

`notechanges.NoteChanges` finds them; the hook, `kbase fix` and the PR report read them.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Literal

from kbase_ci.parsed import Finding, Link

Reason = Literal["renamed", "deleted", "moved", "alias-removed", "anchor-removed",
                 "anchor-renamed"]
LinkKey = tuple[str, int, int, str]
"""(source note, line, col, raw): one link occurrence."""


@dataclass(frozen=True, slots=True)
class Breakage:
    """One link this commit breaks, at the link's own position."""

    source: str
    link: Link
    code: str
    """KB101/KB102 (target gone), KB106 (now finds another note), KB111/KB112 (anchor)."""
    reason: Reason
    cause: str
    """Why, in words: "`notes/Old.md` was renamed to `notes/New.md` in this commit"."""
    old_target: str
    """What the link found before this commit (HEAD path)."""
    new_target: str | None
    """Where that file is now; None when it was deleted."""
    suggestion: str | None = None
    """The link re-written to work again, in its own style, when there is one."""

    @property
    def key(self) -> LinkKey:
        return (self.source, self.link.line, self.link.col, self.link.raw)

    @property
    def fixable(self) -> bool:
        """A rewrite `kbase fix` applies: the target (or this note) moved, nothing was lost."""
        return self.reason in ("renamed", "moved") and self.suggestion is not None

    @property
    def message(self) -> str:
        hint = f"; did you mean {self.suggestion}?" if self.suggestion else ""
        return f"{self.link.raw}: {self.cause}{hint}"

    def finding(self) -> Finding:
        return Finding(self.source, self.link.line, self.link.col, self.code, self.message,
                       suggestion=self.suggestion)


def name_key(target: str) -> str:
    """The lower-cased last path segment without `.md`: what any spelling of a link to a
    file has in common (`[[Old]]`, `[[dir/Old.md]]`, `[x](../dir/Old.md)`)."""
    seg = target[target.rfind("/") + 1:]
    key = seg.lower() if seg.isascii() else unicodedata.normalize("NFC", seg).lower()
    return key[:-3] if key.endswith(".md") else key
