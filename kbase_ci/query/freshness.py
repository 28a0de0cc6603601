"""How far the index is behind the work tree, and the notes to re-read because of it.

The index records the blob id of every note it indexed, so comparing those with the work
tree's blob ids (`git ls-files` plus the modified files, hashed) finds every change since
the index's source commit -- committed, staged or not -- even when that commit is not in
this clone. A rename is a delete plus an add.

When the set of note names changes (a note added, deleted or renamed, or aliases edited),
links in *unchanged* notes may now point elsewhere: those that were unresolved, those
that pointed at a removed note, and those whose text names an added note. Their notes are
"relinked": re-parsed for links only (their indexed text is still right).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import gitio
from ..model import ParsedNote
from ..scanner import scan
from ..vault import Vault


@dataclass(frozen=True)
class Freshness:
    changed: tuple[str, ...]
    """Notes in both, with other content than the index's."""
    added: tuple[str, ...]
    deleted: tuple[str, ...]
    relinked: tuple[str, ...]
    """Unchanged notes whose links must be resolved again."""
    parsed: dict[str, ParsedNote]
    """Fresh parses of changed, added and relinked notes."""

    @property
    def stale(self) -> tuple[str, ...]:
        return tuple(sorted({*self.changed, *self.added, *self.deleted}))

    @property
    def overlaid(self) -> bool:
        return bool(self.stale or self.relinked)


def refresh_stat(root: Path) -> None:
    """Refresh the git index's stat data, as `git status` does. In a fresh clone every
    entry is "racily clean" (written in the same second as the index), so each
    `git diff-files` would hash all notes again; after one refresh it only compares
    stat data. Contents, staging and HEAD are untouched; failure (read-only repo, a
    concurrent git holding index.lock) just leaves the slow path."""
    gitio.run(["update-index", "-q", "--refresh"], root)


def _key(text: str) -> str:
    return text.strip().casefold()


def assess(vault: Vault, notes: dict[str, Any],
           links: Callable[[], dict[str, Any]]) -> Freshness:
    """Compare the index's notes table with the vault's work tree; `links` reads the
    links table, which is large and needed only when note names changed."""
    fields = notes["fields"]
    ip, ib, ia, ititle = (fields.index("path"), fields.index("blob"),
                          fields.index("aliases"), fields.index("title"))
    indexed = {row[ip]: row[ib] for row in notes["rows"]}
    current = {n.path: n.sha for n in vault.notes}
    changed = sorted(p for p, sha in current.items() if p in indexed and indexed[p] != sha)
    added = sorted(p for p in current if p not in indexed)
    deleted = sorted(p for p in indexed if p not in current)
    by_path = {n.path: n for n in vault.notes}
    parsed_list, _ = scan(vault, [by_path[p] for p in [*changed, *added]]) \
        if changed or added else ([], None)
    parsed = {n.path: n for n in parsed_list}

    old_names = {row[ip]: {_key(row[ititle]), *(_key(a) for a in row[ia])}
                 for row in notes["rows"] if row[ip] in changed}
    names_moved = bool(added or deleted) or any(
        old_names[p] != {_key(parsed[p].title), *(_key(a) for a in parsed[p].aliases)}
        for p in changed)
    relinked: list[str] = []
    if names_moved:
        relinked = _relinked(notes, links(), set(changed) | set(added), set(deleted), parsed)
        more, _ = scan(vault, [by_path[p] for p in relinked])
        parsed.update({n.path: n for n in more})
    return Freshness(tuple(changed), tuple(added), tuple(deleted), tuple(relinked), parsed)


def _relinked(notes: dict[str, Any], links: dict[str, Any], fresh: set[str],
              deleted: set[str], parsed: dict[str, ParsedNote]) -> list[str]:
    paths = [row[notes["fields"].index("path")] for row in notes["rows"]]
    lf = links["fields"]
    isrc, itgt, iraw, istatus = (lf.index("source"), lf.index("target"), lf.index("raw"),
                                 lf.index("status"))
    gone_numbers = {i for i, p in enumerate(paths) if p in deleted or p in fresh}
    new_names = {_key(n.title) for n in parsed.values()}
    new_names |= {_key(a) for n in parsed.values() for a in n.aliases}
    new_names |= {_key(p.rsplit("/", 1)[-1].removesuffix(".md")) for p in deleted}
    out: set[str] = set()
    for row in links["rows"]:
        src = paths[row[isrc]]
        if src in deleted or src in fresh or src in out:
            continue
        target = row[itgt]
        if row[istatus] == "unresolved" or (isinstance(target, int) and target in gone_numbers):
            out.add(src)
            continue
        raw = row[iraw].casefold()
        if any(name and name in raw for name in new_names):
            out.add(src)
    return sorted(out)
