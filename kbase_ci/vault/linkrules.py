"""Obsidian's resolution rules that need no vault (docs/resolution.md): how names are
compared, rule 6's order among several files, rule 7's path suffix, rule 8's join that
stops at the root, and the version of the rules that keys stored links.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

Status = Literal["ok", "unresolved", "external", "escapes"]

RULES_VERSION = 2
"""Bump whenever the same vault can resolve a link differently: it keys stored links."""


def match_key(text: str) -> str:
    # NFC because macOS writes decomposed file names while links are typed composed.
    # ASCII text is already NFC; skipping normalize() halves index building on 10k notes.
    return text.lower() if text.isascii() else unicodedata.normalize("NFC", text).lower()


def strip_md(name: str) -> str:
    return name[:-3] if name.lower().endswith(".md") else name


def has_extension(target: str) -> bool:
    stem, dot, ext = target.rpartition("/")[2].rpartition(".")
    return bool(dot and stem and ext) and ext.lower() != "md"


def clamp_join(folder: str, rel: str) -> tuple[str, bool]:
    """Rule 8: `folder/rel` with `.` and `..` applied, and whether a `..` climbed above
    the vault root. Obsidian stops at the root there, and the rest of the path must
    still match: `[x](../../other/Deep.md)` from `notes/N.md` is `other/Deep.md`, which
    `notes2/Deep.md` is not."""
    parts = folder.split("/") if folder else []
    climbed = False
    for seg in rel.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if parts:
                parts.pop()
            else:
                climbed = True
        else:
            parts.append(seg)
    return "/".join(parts), climbed


def ends_with_path(path_key: str, written_key: str) -> bool:
    """Rule 7: a file matches a written path when its path ends with it, as a plain
    string (case-insensitively, `.md` added to a note name): `[[eep/sub/Widget]]` finds
    `lib/deep/sub/Widget.md`, whole folder names or not."""
    return path_key.endswith(written_key)


def obsidian_order(folder: str) -> Callable[[str], tuple[bool, int, str]]:
    """Rule 6: among several files a link could mean, Obsidian takes (after an exact
    vault path, which callers check first) those whose path string starts with the
    linking note's folder (subfolders count), then the rest, each by the shortest path
    string, case-insensitively. The path itself breaks the remaining ties, so the
    choice is deterministic: `Themes/Topic.md` before `Plugins/topic.md` from the root;
    from `n/Todo.md`, `n/deep/er/Log.md` before `a/Log.md`."""
    prefix = match_key(folder)
    return lambda p: (not match_key(p).startswith(prefix), len(p), p)


def index_by(paths: Sequence[str], key_of: Sequence[str] | None = None) -> dict[str, list[str]]:
    """key -> paths with that key, each list sorted (`paths` must come sorted)."""
    out: dict[str, list[str]] = {}
    keys = key_of if key_of is not None else [match_key(p) for p in paths]
    for key, path in zip(keys, paths, strict=True):
        hits = out.get(key)
        if hits is None:
            out[key] = [path]
        else:
            hits.append(path)
    return out


class Hit(NamedTuple):  # a tuple: built once per link, so it must be cheap
    target: str
    via: str
    candidates: tuple[str, ...] = ()



def many(hits: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(hits)) if len(hits) > 1 else ()
