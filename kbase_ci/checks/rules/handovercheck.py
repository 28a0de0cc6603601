"""Typed notes (handover, question, answer, discovery, decision) missing what their type
requires: every item that costs completeness points is a finding (see completeness)."""

from __future__ import annotations

from collections.abc import Iterator

from kbase_ci.checks.checkcontext import CheckContext
from kbase_ci.parsed import Finding

CODES = {
    "KB401": "a required section is missing",
    "KB402": "a section or field holds only a placeholder (empty bullet, TODO, "
             "\"check the code\", the heading repeated)",
    "KB403": "a required frontmatter field is missing",
    "KB404": "a field or section value is not one of the allowed values, or of the wrong type",
    "KB405": "a link field does not resolve to a note, or an issue field is not an issue id",
    "KB406": "a Changes Made path does not exist and was not deleted in this change",
    "KB407": "a conditional rule is not met (status partial: Next Steps and Blockers)",
    "KB408": "a complete note links a question that has no answer",
    "KB409": "a link field does not point to an existing note of the required type "
             "(an answer to a question that does not exist)",
    "KB410": "Build Verification names no command, or a command without its outcome",
    "KB411": "Changes Made lists no file paths",
    "KB412": "a Changes Made path is not changed by the PR (PR report only)",
    "KB413": "a file the PR changed is not mentioned by any handover (PR report only)",
    "KB414": "the PR adds or changes no handover (PR report only)",
}
WARNINGS = frozenset({"KB408"})
"""Codes reported as warnings by default (the registry's severity)."""


def check(ctx: CheckContext) -> Iterator[Finding]:
    vault = ctx.vault
    if vault is None:  # no note text to read: nothing this check can judge
        return
    types = ctx.config.types
    focus = [n for n in ctx.focus_notes if types.type_of(n) is not None]
    if not focus:
        return
    # Only typed notes need the completeness rules: a hook on plain notes skips the import.
    from kbase_ci.git import history
    from kbase_ci.handover.completeness import Assessor

    staged = vault.mode == "git-index"
    staged_deletions: list[frozenset[str]] = []

    def deleted(path: str) -> frozenset[str]:
        if not staged:
            return history.deleted_with(vault.root, path, staged=False)
        if not staged_deletions:  # one commit, one change set: read it once
            staged_deletions.append(history.deleted_with(vault.root, path, staged=True))
        return staged_deletions[0]

    assessor = Assessor(ctx.by_path, ctx.files, types, ctx.resolver, deleted=deleted)
    for note in focus:
        score = assessor.assess(note, ctx.text(note.path))
        if score is not None:
            yield from score.findings()
