"""Which links name a file: a lookup by file extension instead of a scan per name.

An added or deleted attachment can change only links whose raw text names it (its file
name, case-insensitive, or %-encoded). Testing every link for every name cost seconds on
a 200k-link vault with a few hundred untracked files. Every such name ends with its
extension (a link reaches an attachment only by a name with one: `resolver._find`), so
each occurrence of `.ext` in the links' text is looked at once, and the few names of that
extension are tried as the text ending there: a set lookup per name length.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Sequence
from urllib.parse import quote


def attachment_names(paths: Collection[str]) -> set[str]:
    """The file names of `paths` a link can reach them by (with a stem and an extension
    other than `.md`), case-folded, also %-encoded."""
    names: set[str] = set()
    for path in paths:
        name = path.rsplit("/", 1)[-1].casefold()
        stem, dot, ext = name.rpartition(".")
        if stem and dot and ext and ext != "md":
            # The links' text is case-folded too: `%C3%A9` is read as `%c3%a9`.
            names.update((name, quote(name).casefold()))
    return names


def links_naming(raws: Sequence[str], names: Collection[str]) -> list[int]:
    """Numbers of the links (`raws`: their raw text) whose case-folded text holds one of
    `names` (case-folded, each with a `.`), in order."""
    if not names:
        return []
    by_ext: dict[str, dict[int, set[str]]] = {}
    for name in names:
        ext = name[name.rindex("."):]
        by_ext.setdefault(ext, {}).setdefault(len(name), set()).add(name)
    starts: list[int] = []
    at = 0
    folded = []
    for raw in raws:
        low = raw.casefold()  # may change the length (`ß`): offsets follow the folded text
        starts.append(at)
        folded.append(low)
        at += len(low) + 1
    text = "\n".join(folded)  # names hold no newline, so no match spans two links
    hits: set[int] = set()
    for ext, lengths in by_ext.items():
        pos = text.find(ext)
        while pos >= 0:
            end = pos + len(ext)
            for size, wanted in lengths.items():
                if size <= end and text[end - size:end] in wanted:
                    hits.add(bisect_right(starts, end - size) - 1)
                    break
            pos = text.find(ext, pos + 1)
    return sorted(hits)
