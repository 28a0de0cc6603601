"""Formatting findings for people and machines. The only module of `check` that prints."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from kbase_ci.checks.checker import CheckReport
from kbase_ci.model import Finding
from kbase_ci.parse.outline import split_lines
from kbase_ci.report.escape import command_data, command_property, terminal_text
from kbase_ci.report.terminal import paint, severity_style

JSON_VERSION = 1


def display_path(root: Path, path: str, base: Path | None = None) -> str:
    """`path` (vault-relative) as seen from `base` (default: the current directory)."""
    full = root / path
    try:
        return os.path.relpath(full, base or Path.cwd())
    except ValueError:  # another drive on Windows
        return full.as_posix()


def write_text(report: CheckReport, root: Path, out: TextIO, *, color: bool = False,
               source_lines: bool = False) -> None:
    cache: dict[str, list[str]] = {}
    for f in report.findings:
        where = terminal_text(f"{display_path(root, f.path)}:{f.line}:{f.col}:")
        sev = "" if f.severity == "error" else " (warning)"
        msg = terminal_text(f.message)
        if color:  # warnings yellow: they must not look like errors
            out.write(f"{paint(where, 'bold', True)} "
                      f"{paint(f.code + sev, severity_style(f.severity), True)} {msg}\n")
        else:
            out.write(f"{where} {f.code}{sev} {msg}\n")
        if source_lines:
            line = _source_line(root, f, cache)
            if line is not None:
                out.write(f"    {terminal_text(line)}\n    {' ' * (f.col - 1)}^\n")


def _source_line(root: Path, f: Finding, cache: dict[str, list[str]]) -> str | None:
    if f.path not in cache:
        try:  # never through a link: a tracked `x.md -> /etc/shadow` is not shown
            fd = os.open(root / f.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as fh:
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            text = ""
        cache[f.path] = split_lines(text)
    lines = cache[f.path]
    if not 1 <= f.line <= len(lines):
        return None
    return lines[f.line - 1].expandtabs(1)


def summary_line(report: CheckReport) -> str:
    walk = " (not a git repository: directory walk)" if report.mode == "walk" else ""
    fixed = ""
    if report.fixed:
        files = sorted({f.path for f in report.fixed})
        fixed = (f"\nkbase: {len(report.fixed)} broken link(s) not repeated: `kbase fix` "
                 f"rewrote them in the work tree in this run ({', '.join(files[:5])}"
                 f"{' ...' if len(files) > 5 else ''}); stage the fix (`git add`) and "
                 "commit again")
    if not report.findings:
        clean = "no other problems" if report.fixed else "no problems"
        return f"kbase: {report.checked} of {report.notes} notes checked, {clean}{walk}{fixed}"
    return (f"kbase: {report.errors} error(s), {report.warnings} warning(s) in "
            f"{len({f.path for f in report.findings})} file(s); {report.checked} of "
            f"{report.notes} notes checked{walk}{fixed}")


def to_json(report: CheckReport) -> dict[str, Any]:
    by_code = Counter(f.code for f in report.findings)
    return {
        "version": JSON_VERSION,
        "vault": {"mode": report.mode, "notes": report.notes, "checked": report.checked},
        "summary": {
            "findings": len(report.findings),
            "errors": report.errors,
            "warnings": report.warnings,
            "by_code": dict(sorted(by_code.items())),
        },
        "ignored_args": list(report.ignored_args),
        "findings": [f.to_json() for f in report.findings],
        "fixed": [f.to_json() for f in report.fixed],
    }


def write_json(report: CheckReport, out: TextIO) -> None:
    json.dump(to_json(report), out, indent=2, ensure_ascii=False)
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
