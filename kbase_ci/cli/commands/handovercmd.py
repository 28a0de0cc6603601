"""`kbase handover check [NOTES...]` and `kbase handover latest [--track T]`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from kbase_ci.cli.common import open_vault
from kbase_ci.cli.queryargs import add_subcommand
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK, UsageError
from kbase_ci.handover.handovers import HandoverReport, PrReport, Question, check_notes, pr_report
from kbase_ci.handover.scoring import Missing, NoteScore
from kbase_ci.query.tools.handover import QUERIES
from kbase_ci.report.findings import display_path


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "handover", help="score handovers and typed notes; find the latest handover",
        description="Completeness of handovers, questions, answers, discoveries and "
                    "decisions (docs/handover.md).")
    hsub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    c = hsub.add_parser(
        "check", help="score typed notes 0-100 and name every missing item",
        description="Score NOTES (default: every typed note). Exit 1 when a note scores "
                    "below the threshold (`handover.threshold`, default 80). With --base, "
                    "score the handovers of the change base..head as a PR report.")
    c.add_argument("notes", nargs="*", metavar="NOTES")
    c.add_argument("--format", choices=["text", "json"], default="text")
    c.add_argument("--threshold", type=int, default=None,
                   help="minimum score (default: handover.threshold)")
    c.add_argument("--base", default=None, metavar="REV",
                   help="PR mode: the base commit of the change")
    c.add_argument("--head", default="HEAD", metavar="REV",
                   help="PR mode: the head commit (must be checked out; default HEAD)")
    c.add_argument("--no-cache", action="store_true", help="ignore the parse cache")
    add_subcommand(hsub, QUERIES[0])  # `latest` is a query (kbase_ci.query.tools.handover)


def run(args: argparse.Namespace) -> int:
    if args.action == "latest":
        # Lazy: `handover check` needs none of a query's printing
        from kbase_ci.cli import queryrun

        return queryrun.run(args)
    vault = open_vault(args, untracked=True)  # a handover just written, not yet added
    out = sys.stdout
    threshold = args.threshold if args.threshold is not None else vault.config.handover.threshold
    if not 0 <= threshold <= 100:
        raise UsageError(f"--threshold must be 0-100, not {threshold}")
    if args.base is not None:
        if args.notes:
            raise UsageError("--base scores the PR's own handovers: give no NOTES")
        pr = pr_report(vault, args.base, args.head, use_cache=not args.no_cache)
        if args.format == "json":
            _dump({**pr.to_json(), "threshold": threshold}, out)
        else:
            _pr_text(pr, vault.root, threshold, out)
        return EXIT_FINDINGS if pr.score < threshold else EXIT_OK
    report = check_notes(vault, args.notes, threshold=threshold, use_cache=not args.no_cache)
    if args.format == "json":
        _dump(report.to_json(), out)
    else:
        _check_text(report, vault.root, out)
    return EXIT_FINDINGS if report.failed else EXIT_OK


def _dump(data: dict[str, Any], out: TextIO) -> None:
    json.dump(data, out, indent=2, ensure_ascii=False)
    out.write("\n")


def _items(root: Path, path: str, items: tuple[Missing, ...], out: TextIO) -> None:
    for m in items:
        cost = f" (-{m.points:g})" if m.points else ""
        sev = " (warning)" if m.severity == "warning" else ""
        out.write(f"{display_path(root, path)}:{m.line}:{m.col}: {m.code}{sev} "
                  f"{m.message}{cost}\n")


def _score_line(n: NoteScore, root: Path, threshold: int) -> str:
    verdict = "ok" if n.score >= threshold else f"below {threshold}"
    status = f", status {n.status}" if n.status else ""
    return f"{display_path(root, n.path)}: {n.type} {n.score}/100{status} ({verdict})\n"


def _questions(qs: tuple[Question, ...], root: Path, out: TextIO, title: str) -> None:
    if not qs:
        return
    out.write(f"{title}:\n")
    for q in qs:
        urgency = f" [{q.urgency}]" if q.urgency else ""
        out.write(f"  {display_path(root, q.path)}{urgency} {q.question or q.title}\n")


def _check_text(r: HandoverReport, root: Path, out: TextIO) -> None:
    for n in r.notes:
        out.write(_score_line(n, root, r.threshold))
        _items(root, n.path, n.missing, out)
    for p in r.untyped:
        out.write(f"{display_path(root, p)}: not a typed note (no `type:`, tag or folder of "
                  "a known type)\n")
    _questions(r.open_questions, root, out, "open questions (no answer links them)")
    print(f"kbase: {len(r.failed)} of {len(r.notes)} typed note(s) below {r.threshold}; "
          f"{len(r.open_questions)} open question(s), {len(r.orphan_answers)} answer(s) to "
          "missing questions", file=sys.stderr)


def _pr_text(pr: PrReport, root: Path, threshold: int, out: TextIO) -> None:
    out.write(f"PR {pr.base}..{pr.head}: handover score {pr.score}/100\n")
    for h in pr.handovers:
        out.write(_score_line(h, root, threshold))
        _items(root, h.path, h.missing, out)
    for m in pr.missing:
        out.write(f"{m.code} {m.message}\n")
    _questions(pr.open_questions, root, out, "unanswered questions the handovers link")
