"""`kbase check [FILES...] [--all]`: report broken links, sections, tags and frontmatter."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kbase_ci.checks.hookbatch import may_break_links
from kbase_ci.cli.common import open_vault, staged_changes_for
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK
from kbase_ci.git.repo import find_root


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "check", help="check notes for broken links, sections, tags and frontmatter",
        description="Report problems as `path:line:col: CODE message`. FILES are the notes "
                    "to report on; links always resolve against the whole vault. With no "
                    "FILES every note is checked. Exit 0 clean, 1 findings, 2 usage or "
                    "config error, 3 internal error.")
    p.add_argument("files", nargs="*", metavar="FILES")
    p.add_argument("--all", action="store_true", help="check every note (the default "
                   "when no FILES are given)")
    p.add_argument("--format", choices=["text", "json", "github", "sarif"], default="text")
    p.add_argument("--select", action="append", default=[], metavar="CODES",
                   help="only these checks or codes (comma-separated; repeatable)")
    p.add_argument("--ignore", action="append", default=[], metavar="CODES",
                   help="skip these checks or codes (comma-separated; repeatable)")
    p.add_argument("--staged", action="store_true",
                   help="read notes from the git index (what pre-commit hooks use)")
    p.add_argument("--jobs", type=int, default=None, help="parser processes (default: "
                   "all cores for large cold scans)")
    p.add_argument("--no-cache", action="store_true", help="ignore the parse cache")
    p.add_argument("--fail-on", choices=["error", "warning"], default="error",
                   help="exit 1 on errors only (default), or on warnings too; warnings are "
                        "reported either way")
    p.add_argument("--all-findings", action="store_true",
                   help="with --staged: report and fail on every finding of the checked "
                        "notes, not only those this commit introduces")


def split_words(values: list[str]) -> list[str]:
    return [w.strip() for v in values for w in v.split(",") if w.strip()]


def run(args: argparse.Namespace) -> int:
    if args.root is None:  # found once: the change set and the vault both need it
        args.root = find_root()
    changes = None
    if args.staged:
        # Hook mode: read the staged change set first, so a commit without Markdown
        # costs one `git diff` and no vault scan.
        changes = staged_changes_for(args)
        if not args.files and not args.all and not may_break_links(changes):
            return EXIT_OK
    # Imported here, not above: a commit without Markdown has returned by now, having
    # loaded neither the config nor the check code (~40 ms of a 80 ms hook run).
    from kbase_ci.checks.checker import check_vault
    from kbase_ci.checks.hookbatch import touches_notes
    from kbase_ci.report.findings import (
        policy_notice,
        summary_line,
        untracked_notice,
        write_github,
        write_json,
        write_text,
    )

    vault = open_vault(args, staged=args.staged)
    if changes is not None:
        files: list[str] | None = None if args.all else list(args.files)
        if files is not None and not touches_notes(vault, changes) and \
                not vault.select(files)[0]:
            return EXIT_OK
    else:
        files = None if args.all or not args.files else list(args.files)
    report = check_vault(vault, files, select=split_words(args.select),
                         ignore=split_words(args.ignore), jobs=args.jobs,
                         use_cache=not args.no_cache, changes=changes,
                         new_only=not args.all_findings)
    for notice in (untracked_notice(report), policy_notice(report, vault.root)):
        if notice:
            print(notice, file=sys.stderr)
    if report.ignored_args and not args.staged:
        # By hand, a mistyped name must not pass silently; under pre-commit, files
        # outside the vault folders are expected and ignored quietly.
        shown = ", ".join(report.ignored_args[:5]) + (" ..." if len(report.ignored_args) > 5
                                                      else "")
        print(f"kbase: ignored {len(report.ignored_args)} argument(s) that are not notes of "
              f"this vault (outside it, excluded, or untracked): {shown}", file=sys.stderr)
    out = sys.stdout
    if args.format == "json":
        write_json(report, out, args.fail_on)
    elif args.format == "sarif":
        from kbase_ci.report.sarif import to_sarif  # lazy: the rule table is SARIF-only

        json.dump(to_sarif(report.findings, vault.root, vault.repo_root), out, indent=2)
        out.write("\n")
    elif args.format == "github":
        write_github(report.findings, vault.root, vault.repo_root, out)
        print(summary_line(report, args.fail_on), file=sys.stderr)
    else:
        from kbase_ci.report.terminal import color_wanted  # text output only

        tty = out.isatty()
        write_text(report, vault.root, out, color=color_wanted(out, args.color),
                   source_lines=tty)
        print(summary_line(report, args.fail_on), file=sys.stderr)
    # Links `kbase fix` rewrote but nobody staged are still broken in the commit.
    return EXIT_FINDINGS if report.failing(args.fail_on) or report.fixed else EXIT_OK
