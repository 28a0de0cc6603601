"""The PR workflow's report, read back by the `workflow_run` companion as data only.

The artifact comes from a run that may have executed a fork's code, so it is capped in
size, parsed as JSON, validated field by field (`cireport.from_json`) and re-rendered
here; nothing in it is executed, and nothing it says about where it belongs is
believed: the repository and host come from this run's event, the PR number from the
API, and its head commit must be the one the triggering run was for.
"""

from __future__ import annotations

from pathlib import Path

from kbase_ci.ci.cireport import CiReport, from_json
from kbase_ci.errors import UsageError
from kbase_ci.state.bounded import load_json_file

REPORT_JSON = "report.json"
MAX_BYTES = 64 * 1024 * 1024


def read_artifact(folder: Path, *, head_sha: str, repository: str,
                  server_url: str) -> CiReport:
    path = folder / REPORT_JSON
    if path.is_symlink() or not path.is_file():
        raise UsageError(f"{path}: no report in the artifact (expected a regular file)")
    # Capped, never through a link, `[[[[...` 200k deep refused as data: InputRefused.
    data = load_json_file(path, MAX_BYTES, follow_links=False)
    report = from_json(data)
    if report.head != head_sha:
        raise UsageError(f"{path}: the report is for commit {report.head[:12]}, but the run "
                         f"that uploaded it was for {head_sha[:12]}; refusing to post it")
    return report._replace(repository=repository, server_url=server_url)
