"""The ordered check registry: every check, its stable codes, and its hook id.

Hook ids, `--select`/`--ignore` and docs/checks.md all derive from `REGISTRY`, so a
check exists in one place. A check is a function `(CheckContext) -> Iterable[Finding]`
that reports only on `ctx.focus` notes (plus whatever a change in this commit breaks
elsewhere), while resolving against the whole vault: pre-commit splits file lists
across processes, so no check may depend on seeing every file in one call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kbase_ci.checks import policy
from kbase_ci.checks.checkcontext import CheckContext
from kbase_ci.checks.policy import Policy
from kbase_ci.errors import UsageError
from kbase_ci.parsed import Finding, Severity

if TYPE_CHECKING:
    from pathlib import Path

    from kbase_ci.vault.config import Config


@dataclass(frozen=True)
class Check:
    """One entry of the check registry: a stable name and codes, and the function."""

    name: str
    """Registry name, also the `--select` word and the `kbase-NAME` hook id."""
    summary: str
    codes: dict[str, str]
    """Stable code -> one-line meaning."""
    func: Callable[[CheckContext], Iterable[Finding]]
    rejects: str
    """What its pre-commit hook rejects (the hook's description in .pre-commit-hooks.yaml)."""
    warnings: frozenset[str] = frozenset()
    """Codes whose default severity is `warning` (reported, not failing); the rest are
    errors. `checks.severity` in `.kbase.yml` overrides either."""

    @property
    def hook_id(self) -> str:
        return f"kbase-{self.name}"

    def severity(self, code: str) -> Severity:
        return "warning" if code in self.warnings else "error"


def _registry() -> list[Check]:
    # Imported here so `checks` has no import cycle with the modules it lists.
    from kbase_ci.checks.rules import (
        frontmattercheck,
        handovercheck,
        linkcheck,
        readable,
        sections,
        suppressioncheck,
        tagcheck,
    )

    return [
        Check("input", "notes that cannot be read or parsed as Markdown",
              readable.CODES, readable.check,
              "Reject notes that are not UTF-8 and binary files named .md; warn about notes "
              "over vault.max_note_bytes.", readable.WARNINGS),
        Check("links", "wikilinks, embeds and Markdown links whose target does not exist",
              linkcheck.CODES, linkcheck.check,
              "Reject unresolved links and embeds, links leaving the repository and links "
              "naming an alias; warn about ambiguous names.", linkcheck.WARNINGS),
        Check("sections", "links to a heading or block id the target note lacks",
              sections.CODES, sections.check,
              "Reject links to headings or block ids that do not exist."),
        Check("tags", "tags outside the configured policy, or spelled in several cases",
              tagcheck.CODES, tagcheck.check,
              "Reject tags outside the .kbase.yml tag policy; warn about tags spelled in "
              "several cases.", tagcheck.WARNINGS),
        Check("frontmatter", "YAML frontmatter that is invalid or breaks the configured rules",
              frontmattercheck.CODES, frontmattercheck.check,
              "Reject invalid YAML frontmatter and frontmatter that breaks .kbase.yml rules."),
        Check("handover", "handovers and other typed notes missing what their type requires",
              handovercheck.CODES, handovercheck.check,
              "Reject handovers, questions, answers, discoveries and decisions missing what "
              "their type requires.", handovercheck.WARNINGS),
        Check("suppressions", "`kbase-ignore` comments that name no code or silence nothing",
              policy.CODES, suppressioncheck.check,
              "Report kbase-ignore comments that name no check or code, or silence nothing.",
              policy.WARNINGS),
    ]


REGISTRY: list[Check] = _registry()


def all_codes() -> dict[str, tuple[str, str]]:
    """code -> (check name, meaning), in registry order."""
    return {code: (c.name, text) for c in REGISTRY for code, text in c.codes.items()}


def default_severities() -> dict[str, Severity]:
    """code -> its default severity (`checks.severity` in `.kbase.yml` overrides it)."""
    return {code: c.severity(code) for c in REGISTRY for code in c.codes}


def select(select: Sequence[str] = (), ignore: Sequence[str] = ()) -> list[tuple[Check, set[str]]]:
    """Checks to run and, for each, the codes enabled. Words are check names or codes
    (a code prefix like `KB1` selects a family)."""
    codes = all_codes()
    for word in [*select, *ignore]:
        if not any(_matches(word, c, name) for c, (name, _) in codes.items()):
            known = ", ".join([c.name for c in REGISTRY] + list(codes))
            raise UsageError(f"unknown check or code `{word}`; known: {known}")
    out: list[tuple[Check, set[str]]] = []
    for check in REGISTRY:
        enabled = {
            code for code in check.codes
            if (not select or any(_matches(w, code, check.name) for w in select))
            and not any(_matches(w, code, check.name) for w in ignore)
        }
        if enabled:
            out.append((check, enabled))
    return out


def _matches(word: str, code: str, name: str) -> bool:
    w = word.strip()
    return w == name or (code.upper().startswith(w.upper()) and w[:2].upper() == "KB")


def policy_of(ctx: CheckContext) -> Policy:
    """The severity and suppression rules of `ctx`'s config (built once per context)."""
    if ctx.policy is None:
        ctx.policy = make_policy(ctx.config, ctx.vault.root if ctx.vault is not None else None)
    return ctx.policy


def make_policy(config: Config, root: Path | None = None) -> Policy:
    """The severity and suppression rules of `config`; a config error (KB900, at its
    line) when `checks:` names a check or code that does not exist. `root`: where the
    config file is, to place that error when the settings came from the config memo."""
    owner = {code: name for code, (name, _text) in all_codes().items()}
    return Policy(config, owner, default_severities(),
                  lambda w, code: _matches(w, code, owner[code]), root)


def run_checks(ctx: CheckContext, selected: Sequence[tuple[Check, set[str]]]) -> list[Finding]:
    """The findings of the `selected` checks, weighed and filtered by the config's
    severity, per-path and inline-suppression rules (`policy`)."""
    rules = policy_of(ctx)
    findings: set[Finding] = set()
    enabled: set[str] = set()
    for check, codes in selected:
        wanted = codes - rules.off
        enabled |= wanted
        if not wanted:
            continue  # every code of it is `off`: not even run
        for f in check.func(ctx):
            if f.code in wanted:
                findings.add(f if f.check else _with_check(f, check.name))
    cfg = ctx.config.checks
    configured = {c for _check, codes in select(cfg.select, cfg.ignore) for c in codes}
    kept = rules.apply(sorted(findings, key=Finding.sort_key), ctx.store.suppressions_source,
                       ctx.focus_notes if "KB901" in enabled else (), enabled,
                       configured - rules.off)
    return sorted(kept, key=Finding.sort_key)


def _with_check(f: Finding, name: str) -> Finding:
    return f._replace(check=name)


__all__ = ["REGISTRY", "Check", "CheckContext", "all_codes", "default_severities", "make_policy",
           "policy_of",
           "run_checks", "select"]
