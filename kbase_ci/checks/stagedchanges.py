"""This commit's change set as `breakage.NoteChanges`: staged changes plus HEAD versions.

`git diff --cached -B -M` names the renamed, deleted, added and edited files; the HEAD
versions of changed notes are parsed (point lookups in the parse cache first, so this
costs a few milliseconds); and moves git reports as edits are paired by blob id. Notes
of identical content renamed together are paired again by their paths (`movepairs`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from kbase_ci.checks.movepairs import pair_identical
from kbase_ci.checks.notechanges import NoteChanges
from kbase_ci.git.diff import FileChange, old_blob_shas
from kbase_ci.git.objects import read_blobs
from kbase_ci.parsed import ParsedNote
from kbase_ci.vault.cache import ParseCache, cache_key
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.parsejobs import parse_and_store


def load_change(vault: Vault, changes: Sequence[FileChange], *, inbound: bool = True,
                elsewhere: Collection[str] = (), base: str = "HEAD",
                when: str = "in this commit") -> NoteChanges:
    """The change set with the versions at `base` (HEAD, or the commit a PR or `kbase fix
    --base` compares with) of changed notes parsed (cache first); `when` names the
    change in causes."""
    renames: dict[str, str] = {}
    deleted: set[str] = set()
    added: set[str] = set()
    modified: set[str] = set()
    for c in changes:
        if c.kind == "renamed" and c.old_path is not None:
            renames[c.old_path] = c.path
        elif c.kind == "deleted":
            deleted.add(c.path)
        elif c.kind in ("added", "copied"):
            added.add(c.path)
        else:
            modified.add(c.path)
    old_side = [p for p in (*renames, *deleted, *modified) if vault.is_note_path(p)]
    shas = _head_shas(vault, changes, old_side, base)
    _pair_moves(vault, shas, renames, deleted, added, modified)
    ambiguous = pair_identical(shas, renames, deleted, added,
                               {new: nf.sha for new in renames.values()
                                if (nf := vault.note(new)) is not None})
    old_notes = _old_versions(vault, shas) if shas else {}
    return NoteChanges(renames, deleted, added, modified, old_notes, inbound=inbound,
                  elsewhere=elsewhere, resolve_aliases=vault.config.links.resolve_aliases,
                  include_dot=vault.config.vault.include_dot_folders,
                  vault=vault, old_shas=shas, when=when, ambiguous=ambiguous)


def _head_shas(vault: Vault, changes: Sequence[FileChange], paths: list[str],
               base: str = "HEAD") -> dict[str, str]:
    """Blob ids of `paths` at `base`: from the diff's own records, else asked of git."""
    known = {c.old_path or c.path: c.old_sha for c in changes if c.old_sha is not None}
    shas = {p: known[p] for p in paths if p in known}
    rest = [p for p in paths if p not in shas]
    if rest:  # changes built by hand carry no blob ids
        # Before the first commit there is no HEAD: ls-tree fails and finds nothing.
        shas.update(old_blob_shas(vault.root, base, rest))
    return shas


def _old_versions(vault: Vault, shas: Mapping[str, str]) -> dict[str, ParsedNote]:
    """HEAD versions of a few notes: point lookups in the parse cache, parse the rest."""
    max_bytes = vault.config.vault.max_note_bytes
    keys = {p: cache_key(sha, p, str(max_bytes)) for p, sha in shas.items()}
    cache = ParseCache(vault.git_dir / "kbase" if vault.git_dir else None)
    try:
        got = cache.get_many(list(keys.values()))
        out = {p: got[k] for p, k in keys.items() if k in got}
        missing = sorted(p for p in keys if p not in out)
        if missing:
            blobs = read_blobs(vault.root, [shas[p] for p in missing])
            fresh = parse_and_store(cache, [(p, blobs[shas[p]]) for p in missing], keys,
                                    max_bytes)
            out.update({n.path: n for n in fresh})
    finally:
        cache.close()
    return out


def _pair_moves(vault: Vault, old_shas: Mapping[str, str], renames: dict[str, str],
                deleted: set[str], added: set[str], modified: set[str]) -> None:
    """Moves git reports as edits: `a -> b, b -> a` of small files (too small for `-B`)
    shows as two modified paths; the same blob in another place is a move."""
    by_sha: dict[str, list[str]] = {}
    for p in sorted(modified | deleted):
        if p in old_shas and p not in renames:
            by_sha.setdefault(old_shas[p], []).append(p)
    if not by_sha:
        return
    taken = set(renames.values())
    for x in sorted(modified | added):
        nf = vault.note(x)
        if x in taken or nf is None:
            continue
        ys = [y for y in by_sha.get(nf.sha, ()) if y != x and y not in renames]
        if len(ys) == 1:
            renames[ys[0]] = x
            taken.add(x)
    for p in sorted(modified):
        if p in renames or p in taken:
            modified.discard(p)
            if p not in renames:
                deleted.add(p)  # its old content went nowhere
            if p not in taken:
                added.add(p)  # its new content came from nowhere
    added.difference_update(taken)
    deleted.difference_update(renames)
