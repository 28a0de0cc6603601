"""The hook's new-only rule: a commit is blocked only by the findings it introduces.

`kbase check --staged` finds what the staged state says; the findings in notes that
also existed at HEAD are compared with HEAD's own findings for those notes, matched as
the PR report matches them (`findingmatch`). Cheap where it can be:

- links this commit breaks (`breakage`) are new by definition (they worked at HEAD),
  and so is every finding in a note the commit adds: neither needs HEAD;
- HEAD is checked only when a finding is left, and only for the notes holding one
  (by their HEAD path), against the vault as it was: the staged notes with the changed
  ones swapped back (`NoteChanges.old_state`: the HEAD versions `stagedchanges` parsed
  already), resolved by the HEAD resolver the breakage search may have built anyway;
- HEAD's config is the one HEAD had, so a commit that tightens the policy
  (`tags.allowed`) introduces the findings the new policy makes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kbase_ci.checks import checkregistry as checks
from kbase_ci.checks.findingmatch import AddedLines, mark
from kbase_ci.checks.notechanges import NoteChanges
from kbase_ci.checks.suggestions import Suggester
from kbase_ci.errors import KbaseError
from kbase_ci.parsed import Finding, ParsedNote
from kbase_ci.vault.configsource import config_at
from kbase_ci.vault.notefiles import Vault
from kbase_ci.vault.resolver import ResolvedLink


@dataclass(frozen=True)
class Split:
    new: tuple[Finding, ...]
    pre_existing: tuple[Finding, ...]
    """Findings HEAD already had (matched, not blocking)."""


def split_new(vault: Vault, ctx: checks.CheckContext, found: Sequence[Finding], *,
              select: Sequence[str] = (), ignore: Sequence[str] = (),
              same_config: bool = True) -> Split:
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
    before = _head_findings(vault, ctx, change,
                            {moved_from.get(f.path, f.path) for f in candidates},
                            select, ignore, same_config)
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


def _head_findings(vault: Vault, ctx: checks.CheckContext, change: NoteChanges,
                   paths: set[str], select: Sequence[str], ignore: Sequence[str],
                   same_config: bool) -> list[Finding] | None:
    """HEAD's findings in the notes at `paths` (HEAD paths), checked against the vault as
    it was: the staged store with the changed notes swapped back (`old_state`, nothing
    listed or decoded again) and, unless the commit changed it, the same config."""
    try:
        config = vault.config if same_config else config_at(vault.root, "HEAD")
    except KbaseError:  # no HEAD, or HEAD's config was broken: everything is new
        return None
    store, files = change.old_state(ctx.store, ctx.files)
    present = {p for p in paths if store.__contains__(p)}
    if not present:
        return []
    head = checks.CheckContext(store, files, config, present, vault=vault)
    if same_config:
        # An edit that renames, adds or removes nothing links can find (the usual one)
        # resolves as at HEAD: the resolver built for the staged state serves, instead
        # of name tables for the whole vault built again (~0.2 s on 38k notes).
        head.__dict__["resolver"] = ctx.resolver if change.keeps_targets(ctx.store) \
            else change.old_resolver(ctx.store, ctx.files)
    # "Did you mean" is no part of a match (`findingmatch` strips it): not worked out.
    head.__dict__["suggester"] = _NoSuggestions(head.resolver, ())
    # The handover check reads note texts: those of notes this commit changed are HEAD's
    # (read only if a check asks: most notes are no handover).
    head.known_blobs({p: sha for p in present if p in change.old_notes
                      and (sha := change.old_sha(p)) is not None})
    cfg = config.checks
    try:
        selected = checks.select([*cfg.select, *select], [*cfg.ignore, *ignore])
        return checks.run_checks(head, selected)
    except KbaseError:
        return None


class _NoSuggestions(Suggester):
    """HEAD's findings are only matched, and a match ignores suggestions."""

    def for_target(self, r: ResolvedLink) -> str | None:
        return None

    def for_anchor(self, r: ResolvedLink, note: ParsedNote) -> str | None:
        return None
