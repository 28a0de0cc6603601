"""The hook's new-only rule: a commit is blocked only by the findings it introduces.

`kbase check --staged` finds what the staged state says; the findings in notes that
also existed at HEAD are compared with HEAD's own findings for those notes, matched as
the PR report matches them (`findingmatch`). Cheap where it can be:

- links this commit breaks (`breakage`) are new by definition (they worked at HEAD),
  and so is every finding in a note the commit adds: neither needs HEAD;
- HEAD is checked only when a finding is left, and only for the notes holding one
  (by their HEAD path), against the vault as it was (`Vault(rev="HEAD")`, from the
  parse cache: its blobs were parsed when they were staged, or by `stagedchanges`);
- HEAD's config is the one HEAD had, so a commit that tightens the policy
  (`tags.allowed`) introduces the findings the new policy makes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kbase_ci.checks import registry as checks
from kbase_ci.checks.breakage import NoteChanges
from kbase_ci.checks.findingmatch import AddedLines, mark
from kbase_ci.errors import KbaseError
from kbase_ci.model import Finding
from kbase_ci.vault.files import Vault
from kbase_ci.vault.scanner import open_store


@dataclass(frozen=True)
class Split:
    new: tuple[Finding, ...]
    pre_existing: tuple[Finding, ...]
    """Findings HEAD already had (matched, not blocking)."""


def split_new(vault: Vault, ctx: checks.CheckContext, found: Sequence[Finding], *,
              select: Sequence[str] = (), ignore: Sequence[str] = (),
              same_config: bool = True, use_cache: bool = True) -> Split:
    """`found` (the staged findings of `ctx`, a hook context) as new and pre-existing."""
    change = ctx.change
    if change is None or not found:
        return Split(tuple(found), ())
    broken = {(k[0], k[1], k[2]) for k in ctx.breakage}
    moved_from = {new: old for old, new in change.renames.items()}
    new: list[Finding] = []
    candidates: list[Finding] = []
    for f in found:
        if (f.path, f.line, f.col) in broken or (f.path in change.added
                                                 and f.path not in moved_from):
            new.append(f)
        else:
            candidates.append(f)
    if not candidates:
        return Split(tuple(found), ())
    before = _head_findings(vault, {moved_from.get(f.path, f.path) for f in candidates},
                            select, ignore, same_config, use_cache)
    if before is None:  # no HEAD (a first commit) or a HEAD that cannot be checked
        return Split(tuple(found), ())
    pre: list[Finding] = []
    for status, f in mark(before, candidates, change.renames, _lines(change)):
        if status == "new":
            new.append(f)
        elif status == "pre-existing":
            pre.append(f)
    return Split(tuple(sorted(new, key=Finding.sort_key)),
                 tuple(sorted(pre, key=Finding.sort_key)))


def _lines(change: NoteChanges) -> AddedLines:
    def added(path: str) -> frozenset[int]:
        got = change.written_lines(path)
        return frozenset() if got is None else got

    return added


def _head_findings(vault: Vault, paths: set[str], select: Sequence[str],
                   ignore: Sequence[str], same_config: bool, use_cache: bool
                   ) -> list[Finding] | None:
    """HEAD's findings in the notes at `paths` (HEAD paths), checked against HEAD's vault."""
    try:
        head = Vault(vault.root, rev="HEAD", config=vault.config if same_config else None)
        present = [n for n in head.notes if n.path in paths]
        if not present:
            return []
        # A subset (all notes) rather than None: the HEAD listing must not prune the
        # parse cache rows of the staged blobs.
        store, _ = open_store(head, list(head.notes), jobs=1, use_cache=use_cache)
        cfg = head.config.checks
        ctx = checks.CheckContext(store, head.files, head.config, {n.path for n in present},
                                  vault=head)
        selected = checks.select([*cfg.select, *select], [*cfg.ignore, *ignore])
        return checks.run_checks(ctx, selected)
    except KbaseError:
        return None
