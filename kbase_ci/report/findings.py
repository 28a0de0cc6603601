"""Formatting findings for people and machines. The only module of `check` that prints."""

from __future__ import annotations

import functools
import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from kbase_ci.checks.checker import CheckReport
from kbase_ci.parse.outline import split_lines
from kbase_ci.parsed import Finding, Severity
from kbase_ci.report.escape import command_data, command_property, terminal_text
from kbase_ci.report.terminal import paint, severity_style
from kbase_ci.state.bounded import read_input
from kbase_ci.typedjson import Record
from kbase_ci.vault.notefiles import VaultMode

JSON_VERSION = 1


def display_path(root: Path, path: str, base: Path | None = None) -> str:
    """`path` (vault-relative) as seen from `base` (default: the current directory)."""
    here = os.getcwd()  # a relative root or base is taken from it
    top, start = _absolute(os.fspath(root), here if base is None else os.fspath(base), here)
    full = os.path.normpath(os.path.join(top, path))
    # os.path.relpath's answer, without its two abspath calls per finding when the note
    # is under `start` (the usual case: ~0.1 ms each, 0.3 s of a 3,000-finding report).
    if full.startswith(start) and full[len(start):len(start) + 1] == os.sep:
        return full[len(start) + 1:]
    try:
        return os.path.relpath(full, start)
    except ValueError:  # another drive on Windows
        return (root / path).as_posix()


@functools.lru_cache(maxsize=8)
def _absolute(root: str, base: str, here: str) -> tuple[str, str]:
    return os.path.abspath(root), os.path.abspath(base)


def write_text(report: CheckReport, root: Path, out: TextIO, *, color: bool = False,
               source_lines: bool = False) -> None:
    cache: dict[str, list[str]] = {}
    for f in report.findings:
        if not color:
            out.write(_plain_line(f, root) + "\n")
        else:  # warnings yellow: they must not look like errors
            where = terminal_text(f"{display_path(root, f.path)}:{f.line}:{f.col}:")
            sev = "" if f.severity == "error" else " (warning)"
            out.write(f"{paint(where, 'bold', True)} "
                      f"{paint(f.code + sev, severity_style(f.severity), True)} "
                      f"{terminal_text(f.message)}\n")
        if source_lines:
            line = _source_line(root, f, cache)
            if line is not None:
                out.write(f"    {terminal_text(line)}\n    {' ' * (f.col - 1)}^\n")


def _plain_line(f: Finding, root: Path) -> str:
    where = terminal_text(f"{display_path(root, f.path)}:{f.line}:{f.col}:")
    sev = "" if f.severity == "error" else " (warning)"
    return f"{where} {f.code}{sev} {terminal_text(f.message)}"


def _source_line(root: Path, f: Finding, cache: dict[str, list[str]]) -> str | None:
    if f.path not in cache:
        try:  # never through a link (a tracked `x.md -> /etc/shadow`), nor a FIFO
            text = read_input(root / f.path, within=root, follow_links=False
                              ).decode("utf-8", "replace")
        except OSError:  # InputRefused included
            text = ""
        cache[f.path] = split_lines(text)
    lines = cache[f.path]
    if not 1 <= f.line <= len(lines):
        return None
    return lines[f.line - 1].expandtabs(1)


def summary_line(report: CheckReport, fail_on: Severity = "error") -> str:
    walk = " (not a git repository: directory walk)" if report.mode == "walk" else ""
    fixed = ""
    if report.fixed:
        files = sorted({f.path for f in report.fixed})
        fixed = (f"\nkbase: {len(report.fixed)} broken link(s) not repeated: `kbase fix` "
                 f"rewrote them in the work tree in this run ({', '.join(files[:5])}"
                 f"{' ...' if len(files) > 5 else ''}); stage the fix (`git add`) and "
                 "commit again")
    old = len(report.pre_existing)
    pre = f"{old} pre-existing (not blocking; --all-findings shows them)" if old else ""
    checked = f"{report.checked} of {report.notes} notes checked"
    if not report.findings:
        clean = "no other problems" if report.fixed else "no problems"
        if pre:
            clean = f"no new problems, {pre}"
        return f"kbase: {checked}, {clean}{walk}{fixed}"
    counts = f"{report.errors} error(s), {report.warnings} warning(s)"
    if report.new_only:
        counts = f"{len(report.findings)} new ({counts})"
    in_files = len({f.path for f in report.findings})
    quiet = ""
    if not report.failing(fail_on):
        quiet = " (not failing: warnings fail with --fail-on warning)"
    old_ones = f", {pre}" if pre else ""
    return f"kbase: {counts} in {in_files} file(s){quiet}{old_ones}; {checked}{walk}{fixed}"


def untracked_notice(report: CheckReport) -> str | None:
    """A note for the named files git does not track yet (checked as they are on disk)."""
    if not report.untracked:
        return None
    shown = ", ".join(report.untracked[:5]) + (" ..." if len(report.untracked) > 5 else "")
    return (f"kbase: {len(report.untracked)} untracked file(s) checked as they are in the "
            f"work tree (`git add` to commit them; other untracked notes resolve too): {shown}")


def policy_notice(report: CheckReport, root: Path) -> str | None:
    """What a commit that changes `.kbase.yml` stopped reporting (issue 38): its
    sections, and the findings HEAD's settings would give the commit."""
    if not report.policy_sections:
        return None
    which = ", ".join(f"`{s}`" for s in report.policy_sections)
    if not report.policy_unseen:
        return (f"kbase: this commit changes how `.kbase.yml` judges notes ({which}); "
                "HEAD's settings find nothing more in it")
    shown = [f"  {_plain_line(f, root)}" for f in report.policy_unseen[:20]]
    more = len(report.policy_unseen) - len(shown)
    return "\n".join([
        f"kbase: this commit changes how `.kbase.yml` judges notes ({which}); under HEAD's "
        f"settings it would add {len(report.policy_unseen)} problem(s) not reported now:",
        *shown, *([f"  ... and {more} more"] if more > 0 else [])])


class CheckedVault(Record):
    mode: VaultMode
    notes: int
    checked: int


class CheckSummary(Record):
    findings: int
    errors: int
    warnings: int
    by_code: dict[str, int]
    fail_on: Severity
    failing: int
    new_only: bool
    pre_existing: int


class PolicyUnseen(Record):
    """What a commit's `.kbase.yml` change stopped reporting (issue 38)."""

    sections: tuple[str, ...]
    unseen: tuple[Finding, ...]


class CheckJson(Record):
    """`kbase check --format json`: a check run, as judged under a `--fail-on`."""

    version: int
    vault: CheckedVault
    summary: CheckSummary
    ignored_args: tuple[str, ...]
    untracked: tuple[str, ...]
    findings: tuple[Finding, ...]
    fixed: tuple[Finding, ...]
    pre_existing: tuple[Finding, ...]
    policy_change: PolicyUnseen | None


def check_json(report: CheckReport, fail_on: Severity = "error") -> CheckJson:
    by_code = Counter(f.code for f in report.findings)
    return CheckJson(
        JSON_VERSION, CheckedVault(report.mode, report.notes, report.checked),
        CheckSummary(len(report.findings), report.errors, report.warnings,
                     dict(sorted(by_code.items())), fail_on, report.failing(fail_on),
                     report.new_only, len(report.pre_existing)),
        report.ignored_args, report.untracked, report.findings, report.fixed,
        report.pre_existing,
        PolicyUnseen(report.policy_sections, report.policy_unseen)
        if report.policy_sections else None)


def write_json(report: CheckReport, out: TextIO, fail_on: Severity = "error") -> None:
    json.dump(check_json(report, fail_on).to_json(), out, indent=2, ensure_ascii=False)
    out.write("\n")


def write_github(findings: Sequence[Finding], root: Path, repo_root: Path | None,
                 out: TextIO) -> None:
    """Workflow-command annotations; paths are relative to the repository root."""
    base = repo_root or root
    for f in findings:
        level = "error" if f.severity == "error" else "warning"
        path = command_property(display_path(root, f.path, base))
        title = command_property(f"{f.code} {f.check}".strip())
        out.write(f"::{level} file={path},line={f.line},col={f.col},title={title}::"
                  f"{command_data(f.message)}\n")
