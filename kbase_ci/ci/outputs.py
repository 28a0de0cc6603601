"""Writing one run's outputs: the report folder, the step summary, `$GITHUB_OUTPUT`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kbase_ci.ci.artifact import REPORT_JSON
from kbase_ci.ci.cireport import CiReport
from kbase_ci.ci.render import comment_body, render, step_summary
from kbase_ci.errors import UnsafePathError
from kbase_ci.report.sarif import to_sarif
from kbase_ci.state.files import write_atomic
from kbase_ci.vault.safefs import links_between

REPORT_MD, REPORT_SARIF, COMMENT_MD = "report.md", "report.sarif", "comment.md"


def sarif_report(r: CiReport, root: Path, repo_root: Path | None) -> dict[str, Any]:
    """SARIF of the head's findings; each result says whether this PR introduced it."""
    marked = [m for m in r.findings if m.status != "fixed"]
    doc = to_sarif([m.finding for m in marked], root, repo_root)
    for result, m in zip(doc["runs"][0]["results"], marked, strict=True):
        result["properties"] = {"kbase/status": m.status}
    return doc


def write_report_dir(r: CiReport, out_dir: Path, *, root: Path | None,
                     repo_root: Path | None, more: str | None) -> list[Path]:
    link = links_between(repo_root, out_dir) if repo_root is not None else None
    if link is not None:  # a committed `kbase-report -> ~` must not lead the writes out
        raise UnsafePathError(f"{out_dir}: {link} is a symbolic link; not writing the "
                              "report through it")
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {
        REPORT_JSON: json.dumps(r.to_json(), indent=1, ensure_ascii=False) + "\n",
        REPORT_MD: render(r, more=more),
        COMMENT_MD: comment_body(r, more),
    }
    if root is not None:
        files[REPORT_SARIF] = json.dumps(sarif_report(r, root, repo_root), indent=1) + "\n"
    written = []
    for name, text in files.items():
        path = out_dir / name
        # A non-UTF-8 note name (surrogate escapes) is written as `\udcff`: in JSON
        # that is the same string's escape, in Markdown readable text.
        # Replaced, never written through: a planted `report.md -> ~/.bashrc` stays a link.
        write_atomic(path, text.encode("utf-8", "backslashreplace"))
        written.append(path)
    return written


def append_step_summary(path: Path, r: CiReport, more: str | None) -> None:
    with path.open("a", encoding="utf-8", errors="backslashreplace") as fh:
        fh.write(step_summary(r, more))


def set_outputs(path: Path, values: Mapping[str, str]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        for key, value in values.items():
            if "\n" in value or "\r" in value:  # every value here is ours; keep it that way
                raise ValueError(f"output {key} spans lines")
            fh.write(f"{key}={value}\n")
