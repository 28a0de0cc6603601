"""`.pre-commit-hooks.yaml`, generated from the check registry: one hook for every check
(`kbase-NAME`, `kbase check --staged --select NAME`), `kbase-check` for all of them, and
`kbase-fix-links`. docs/checks.md names the same hook ids from the same registry, so the
two cannot disagree (tests/unit/checks/test_checks_docs.py compares both files with their renders).

Regenerate after adding a check: `python -m kbase_ci.checks.hookfile > .pre-commit-hooks.yaml`.
"""

from __future__ import annotations

import sys

from kbase_ci.checks.checkregistry import REGISTRY

_HEAD = """\
# Hooks for pre-commit (https://pre-commit.com). Generated from the check registry by
# `python -m kbase_ci.checks.hookfile > .pre-commit-hooks.yaml`; do not edit by hand.
# `kbase-NAME` runs `kbase check --select NAME`; `kbase-check` runs every check.
# always_run: a rename or deletion breaks links in notes this commit does not touch,
# and pre-commit passes neither deleted files nor runs a hook without matching files;
# the hook reads `git diff --cached` itself and exits at once when no Markdown is staged.
# require_serial: each process resolves against the whole vault, so parallel copies
# would only repeat the same scan.
# verbose: pre-commit hides a passing hook's output, and a warning (an ambiguous name,
# a tag in two cases, an unused kbase-ignore) passes; so the checks always show theirs:
# a clean run prints one line. `verbose: false` in your .pre-commit-config.yaml hides it
# again; `args: [--fail-on, warning]` makes warnings fail instead.
"""

FIX_LINKS = "kbase-fix-links"
ALL_CHECKS = "kbase-check"


def _hook(hook_id: str, name: str, description: str, entry: str, *,
          verbose: bool = True) -> str:
    return (f"- id: {hook_id}\n  name: {name}\n  description: {description}\n"
            f"  entry: {entry}\n  language: python\n  types: [markdown]\n"
            "  always_run: true\n  require_serial: true\n"
            + ("  verbose: true\n" if verbose else ""))


def render() -> str:
    names = ", ".join(c.name for c in REGISTRY)
    out = [_HEAD, _hook(ALL_CHECKS, f"kbase check ({names})",
                        "Reject broken links, missing headings and block ids, bad tags and "
                        "frontmatter, unreadable notes and incomplete handovers.",
                        "kbase check --staged")]
    out += [_hook(c.hook_id, f"kbase {c.name}", c.rejects,
                  f"kbase check --staged --select {c.name}") for c in REGISTRY]
    out.append(_hook(FIX_LINKS, "kbase fix links",
                     "Rewrite links broken by notes renamed in this commit to the new path "
                     "(fails when it rewrote files, as fixers do).", "kbase fix --staged",
                     verbose=False))  # it has nothing to say unless it rewrote files
    return "".join(out)


def hook_ids() -> list[str]:
    """Every hook id the file defines, in its order."""
    return [ALL_CHECKS, *(c.hook_id for c in REGISTRY), FIX_LINKS]


if __name__ == "__main__":
    sys.stdout.write(render())
