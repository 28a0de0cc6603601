"""How far the index is behind the work tree, and the notes to re-read because of it.

The index records the blob id of every note it indexed, so comparing those with the work
tree's blob ids (`git ls-files` plus the modified files, hashed) finds every change since
the index's source commit -- committed, staged or not -- even when that commit is not in
this clone. A rename is a delete plus an add.

When the set of note names changes (a note added, deleted or renamed, or aliases edited),
links in *unchanged* notes may now point elsewhere: those that were unresolved, those
that pointed at a removed note, and those whose text names an added note. Their notes are
"relinked": re-parsed for links only (their indexed text is still right).

Attachments count too: a file added since the index (untracked, staged or committed) may
resolve a link that was unresolved, and a deleted one breaks links that reached it. The
notes whose links name such a file (by its file name) or reach a file that is gone are
relinked; nothing else is re-read.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from kbase_ci.git.listing import added_or_deleted_since, refresh_index
from kbase_ci.index.layout import LINKS_FILE
from kbase_ci.index.manifest import IndexManifest
from kbase_ci.index.reader import IndexReader
from kbase_ci.query.linknames import attachment_names, links_naming
from kbase_ci.typedjson import Record, json_field
from kbase_ci.vault.notefiles import NoteFile, Vault

if TYPE_CHECKING:
    from kbase_ci.parsed import ParsedNote


class Freshness(Record):
    changed: tuple[str, ...]
    """Notes in both, with other content than the index's."""
    added: tuple[str, ...]
    deleted: tuple[str, ...]
    relinked: tuple[str, ...]
    """Unchanged notes whose links must be resolved again."""
    parsed: dict[str, ParsedNote]
    """Fresh parses of changed, added and relinked notes."""
    outside: dict[str, ParsedNote] = json_field(default_factory=dict)
    """A scope: fresh parses of the work-tree notes outside it that differ from the main
    index's (added, changed, or moved out of the scope). Links resolve against them, so a
    link landing there is `out_of_scope`, as in a scope rebuilt from this work tree."""

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
    concurrent git holding index.lock) just leaves the slow path. (A query's vault
    listing runs `git status`, which does this itself.)"""
    refresh_index(root)


_OWN = ".kbase/"
"""The index folder in the work tree (`discovery`), vault-relative."""


def _key(text: str) -> str:
    return text.strip().casefold()


class Member(Protocol):
    """A scoped index's membership test (kbase_ci/scope/source.py): work-tree notes
    outside the scope must stay invisible, added or changed; links still resolve against
    them, as the scope's build resolved them against the whole vault."""

    @property
    def main(self) -> Mapping[str, str]:
        """The main index's blob id per note path (every note of the vault it saw)."""
        ...

    def light(self, paths: list[str]) -> list[ParsedNote]:
        """These main-index notes as names and anchors (what a link resolves against)."""
        ...

    def known_outside(self, path: str, sha: str) -> bool:
        """This exact note was outside the scope when it was built (no parse needed)."""
        ...

    def __call__(self, note: ParsedNote) -> bool:
        """Does this fresh parse belong to the scope?"""
        ...


def assess(vault: Vault, reader: IndexReader, member: Member | None = None) -> Freshness:
    """Compare the index's notes (paths and blob ids) with the vault's work tree; the
    link table is read only when note names changed."""
    paths: list[str] = reader.core().paths
    if member is None and _built_from(vault, reader.manifest):
        # The index is of exactly this vault: same commit, nothing changed since, same
        # settings. Its notes are the vault's notes, so nothing is listed or compared.
        new = tuple.__new__
        vault.adopt_notes(lambda: [new(NoteFile, pair)
                                   for pair in zip(paths, reader.blobs(), strict=True)])
        # Same commit, no tracked change: only untracked attachments can be new.
        moved = {p for p in vault.worktree_moves()[0] if _attachment(vault, p)}
        relinks = _attachment_relinks(reader, moved, None, set()) if moved else []
        if not relinks:
            return Freshness((), (), (), (), {})
        by_path = {n.path: n for n in vault.notes}
        parsed_list, _ = scan(vault, [by_path[p] for p in relinks])
        return Freshness((), (), (), tuple(relinks), {n.path: n for n in parsed_list})
    blobs = reader.blobs()
    number = reader.note_numbers()
    current = {n.path: n.sha for n in vault.notes}
    gone_away: list[str] = []  # main-index notes outside the scope, deleted since
    if member is not None:
        gone_away = [p for p in member.main if p not in number and p not in current]
        current = {p: s for p, s in current.items()
                   if p in number or not member.known_outside(p, s)}
    changed = sorted(p for p, sha in current.items()
                     if p in number and blobs[number[p]] != sha)
    added = sorted(p for p in current if p not in number)
    deleted = sorted(p for p in paths if p not in current) \
        if len(current) - len(added) != len(paths) else []
    by_path = {n.path: n for n in vault.notes} if changed or added else {}
    parsed_list, _ = scan(vault, [by_path[p] for p in [*changed, *added]]) \
        if changed or added else ([], None)
    parsed = {n.path: n for n in parsed_list}
    outside: dict[str, ParsedNote] = {}
    if member is not None:  # out of the scope now: a changed note leaves it, an added one
        gone = {p for p in [*changed, *added] if not member(parsed[p])}
        changed = [p for p in changed if p not in gone]
        added = [p for p in added if p not in gone]
        deleted = sorted({*deleted, *(p for p in gone if p in number)})
        outside = {p: parsed.pop(p) for p in sorted(gone)}

    old_names = {}
    for p in changed:
        row = reader.note_row(number[p])
        old_names[p] = {_key(row.title), *(_key(a) for a in row.aliases)}
    # A note outside the scope that is new, changed or deleted may take or free a name
    # that a scope link resolves to (out_of_scope <-> unresolved or inside).
    names_moved = bool(added or deleted or outside or gone_away) or any(
        old_names[p] != {_key(parsed[p].title), *(_key(a) for a in parsed[p].aliases)}
        for p in changed)
    relinked: list[str] = []
    if names_moved:
        relinked = _relinked(reader, set(changed) | set(added), set(deleted),
                             [*parsed.values(), *outside.values()], gone_away)
    moved, known = _attachments_moved(vault, reader.manifest)
    if moved or not known:
        done = {*changed, *added, *deleted, *relinked}
        relinked = sorted({*relinked, *_attachment_relinks(reader, moved, set(vault.files),
                                                           done)})
    if relinked:
        by_path = by_path or {n.path: n for n in vault.notes}
        more, _ = scan(vault, [by_path[p] for p in relinked if p not in parsed])
        parsed.update({n.path: n for n in more})
    return Freshness(tuple(changed), tuple(added), tuple(deleted), tuple(relinked), parsed,
                     outside)


def _attachments_moved(vault: Vault, manifest: IndexManifest) -> tuple[set[str], bool]:
    """Attachments (files that are not notes) added or deleted since the index, and
    whether that is all of them: untracked ones, those git's index adds or drops against
    the index's source commit (`diff --cached`: no work-tree stat), those deleted in the
    work tree only, and those the build saw uncommitted. Not all when the source commit
    is not in this clone (a shallow one): committed additions are then unknown."""
    commit = manifest.source.commit  # a full object id (checked when the manifest was read)
    since = added_or_deleted_since(vault.root, commit) if commit is not None else None
    untracked, modified = vault.worktree_moves()
    files = set(vault.files)
    moved = {*untracked, *(since or ()), *(p for p in modified if p not in files)}
    moved |= set(manifest.source.dirty_paths)
    return {p for p in moved if _attachment(vault, p)}, since is not None


def _attachment(vault: Vault, path: str) -> bool:
    """A file that is not a note, nor kbase's own index (`.kbase/` when git does not
    ignore it: its hundreds of files would be untracked "attachments" to look up)."""
    return not path.startswith(_OWN) and not vault.is_note_path(path)


def _built_from(vault: Vault, manifest: IndexManifest) -> bool:
    """Was the index built from the commit the vault is at, with nothing changed since
    (staged or not) and the same settings (which decide what is a note)?"""
    source = manifest.source
    if source.dirty or not source.commit:
        return False
    if manifest.config_digest != vault.config.digest or \
            not vault.unchanged_since(source.commit):  # False outside a work tree
        return False
    return source.path == vault.prefix().rstrip("/")


def scan(vault: Vault, notes: list[NoteFile]) -> tuple[list[ParsedNote], object]:
    """`scanner.scan`, imported only when notes changed (sqlite3 and the parser)."""
    # Lazy: the scanner, its parse cache and the parsed records (~10 ms of imports) are
    # for a note changed since the index; an up-to-date index answers without them.
    from kbase_ci.vault.scanner import scan as scan_notes

    return scan_notes(vault, notes)


def _attachment_relinks(reader: IndexReader, moved: set[str], files: set[str] | None,
                        skip: set[str]) -> list[str]:
    """Indexed notes (not in `skip`) with a link whose resolution an added or deleted
    attachment (`moved`) can change: it names such a file (its name, case-insensitive,
    also %-encoded), or reached a file that `files` (the work tree's, when known) lacks."""
    raws = reader.link_column("raw")
    named = attachment_names(moved)
    # Usually no link names the file (a scratch file): then the answer cannot change,
    # and no other column is decoded.
    hits = links_naming(raws, named)
    if files is None and not hits:
        return []
    paths: list[str] = reader.core().paths
    sources = reader.link_column("source")
    out = {paths[sources[i]] for i in hits}
    if files is not None:
        out.update(paths[source] for source, target in
                   zip(sources, reader.link_column("target"), strict=True)
                   if isinstance(target, str) and target not in files)
    return sorted(out - skip)


def _relinked(reader: IndexReader, fresh: set[str], deleted: set[str],
              parsed: list[ParsedNote], gone_away: list[str]) -> list[str]:
    paths: list[str] = reader.core().paths
    statuses: list[str] = reader.core().link_statuses
    unresolved = statuses.index("unresolved") if "unresolved" in statuses else -1
    numbers = reader.npy(LINKS_FILE).tolist()
    raws = reader.link_column("raw")
    gone_numbers = {i for i, p in enumerate(paths) if p in deleted or p in fresh}
    new_names = {_key(n.title) for n in parsed}
    new_names |= {_key(a) for n in parsed for a in n.aliases}
    new_names |= {_key(p.rsplit("/", 1)[-1].removesuffix(".md"))
                  for p in [*deleted, *gone_away]}
    out: set[str] = set()
    for (source, target, status), raw in zip(numbers, raws, strict=True):
        src = paths[source]
        if src in deleted or src in fresh or src in out:
            continue
        if status == unresolved or target in gone_numbers:
            out.add(src)
            continue
        raw = raw.casefold()
        if any(name and name in raw for name in new_names):
            out.add(src)
    return sorted(out)
