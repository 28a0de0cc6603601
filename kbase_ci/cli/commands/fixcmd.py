"""`kbase fix [FILES] [--staged] [--dry-run] [--suggestions]`: rewrite links broken by renames
in this commit; with `--suggestions`, also apply the checks' confident "did you mean"."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kbase_ci.checks.hookbatch import may_break_links
from kbase_ci.checks.linkfix import FixReport, fix_staged_moves, fix_suggestions
from kbase_ci.cli.common import open_vault, staged_changes_for, vault_root
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK, UsageError
from kbase_ci.git.repo import rev_commit
from kbase_ci.report.escape import terminal_text
from kbase_ci.report.findings import display_path


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "fix", help="rewrite links broken by notes renamed in this commit",
        description="Rewrite every link that a staged rename (`git mv`, or `git diff --cached "
                    "-M`) breaks so it points at the new path, keeping its alias, heading or "
                    "block, embed `!` and style (wiki or Markdown, `.md` or not, relative or "
                    "vault path, <angle> or %%20). With --suggestions, also apply the "
                    "\"did you mean\" of every link and anchor finding of `kbase check` "
                    "(never without it: a suggestion is a guess). Prints each rewrite as "
                    "`path:line:col: old -> new`. Exit 1 when files were (or, with "
                    "--dry-run, would be) rewritten, 0 when there was nothing to fix.")
    p.add_argument("files", nargs="*", metavar="FILES",
                   help="notes to rewrite (a hook's file list); default: every note")
    p.add_argument("--staged", action="store_true",
                   help="judge links by the git index, as the kbase-fix-links hook does")
    p.add_argument("--dry-run", action="store_true", help="print the rewrites, change nothing")
    p.add_argument("--suggestions", action="store_true",
                   help="also apply every \"did you mean\" of `kbase check` (broken links, "
                        "headings, block ids, alias links, headings the change renamed): "
                        "each is proven to resolve, but it is a guess, so only on request")
    p.add_argument("--base", metavar="REV", default=None,
                   help="repair what was renamed since commit REV (committed or staged), "
                        "not only in the staged change: after renames committed without "
                        "the hook (a web editor, --no-verify), e.g. `--base origin/main`")


def run(args: argparse.Namespace) -> int:
    base = None
    if args.base is not None:
        base = rev_commit(vault_root(args), args.base)
        if not base:
            raise UsageError(f"--base {args.base}: not a commit in this repository")
    changes = staged_changes_for(args, base)
    if not may_break_links(changes) and not args.suggestions:
        return EXIT_OK  # hook mode must be cheap when nothing moved
    vault = open_vault(args, staged=args.staged)
    files = list(args.files) or None
    report = FixReport((), (), (), ())
    if may_break_links(changes):
        report = fix_staged_moves(vault, changes, files, dry_run=args.dry_run,
                                  anchors=args.suggestions,
                                  base=args.base if base is not None else "HEAD")
    if args.suggestions:
        # Read again: the rename fixes may have rewritten notes (unless a dry run).
        vault = vault if args.dry_run or not report.changed else open_vault(
            args, staged=args.staged)
        more = fix_suggestions(vault, files, dry_run=args.dry_run,
                               skip={(e.path, e.line, e.col) for e in report.edits})
        report = FixReport(report.edits + more.edits,
                           tuple(dict.fromkeys(report.changed + more.changed)),
                           report.skipped + more.skipped, report.unfixable)
    print_report(report, vault.root, dry_run=args.dry_run)
    return EXIT_FINDINGS if report.changed or report.skipped else EXIT_OK


def print_report(report: FixReport, root: Any, *, dry_run: bool) -> None:
    out, err = sys.stdout, sys.stderr
    for e in report.edits:
        out.write(terminal_text(f"{display_path(root, e.path)}:{e.line}:{e.col}: {e.old} -> "
                                f"{e.new}") + "\n")
    for path, why in report.skipped:
        err.write(terminal_text(f"{display_path(root, path)}: not rewritten: {why}") + "\n")
    for b in report.unfixable:
        err.write(terminal_text(f"{display_path(root, b.source)}:{b.link.line}:{b.link.col}: "
                                f"cannot rewrite {b.link.raw}: {b.cause}") + "\n")
    if report.edits:
        verb = "would rewrite" if dry_run else "rewrote"
        err.write(f"kbase fix: {verb} {len(report.edits)} link(s) in "
                  f"{len(report.changed)} file(s)\n")
