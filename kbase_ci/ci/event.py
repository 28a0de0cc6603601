"""What the runner says about this run: the `GITHUB_*` variables and the event payload.

Only the fields `kbase ci` uses are kept, each checked for its type, so the rest of
the code never indexes into raw JSON. The payload is GitHub's, but a PR's title,
branch names and the like are written by whoever opened it: none of them is used
for anything but display, and display escapes them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbase_ci.errors import UsageError

PR_EVENTS = ("pull_request", "pull_request_target")


@dataclass(frozen=True, slots=True)
class PullRequest:
    number: int
    head_sha: str
    head_ref: str
    head_repo: str
    """`owner/name` the PR comes from; differs from the repository for a fork."""
    base_sha: str
    base_ref: str
    fork: bool


@dataclass(frozen=True, slots=True)
class WorkflowRun:
    """The run a `workflow_run` companion reacts to."""

    id: int
    head_sha: str
    event: str
    """The event that triggered that run (`pull_request`)."""
    conclusion: str | None
    pull_numbers: tuple[int, ...]
    """From the payload: empty for fork PRs, so never relied on alone."""


@dataclass(frozen=True, slots=True)
class CiEvent:
    name: str
    repository: str
    api_url: str
    server_url: str
    sha: str
    ref: str
    base_ref: str
    head_ref: str
    run_id: str
    default_branch: str | None
    step_summary: Path | None
    output: Path | None
    pull_request: PullRequest | None = None
    workflow_run: WorkflowRun | None = None
    before: str | None = None
    """For `push`: the previous tip of the branch."""

    @property
    def on_default_branch(self) -> bool:
        return self.default_branch is not None and \
            self.ref == f"refs/heads/{self.default_branch}"

    @property
    def run_url(self) -> str | None:
        if not self.run_id or not self.repository:
            return None
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"


def read_event(env: Mapping[str, str]) -> CiEvent:
    """The event of this run; UsageError when not in GitHub Actions or the payload is bad."""
    name = env.get("GITHUB_EVENT_NAME", "")
    if not name:
        raise UsageError("GITHUB_EVENT_NAME is not set: not running in GitHub Actions "
                         "(locally, use `kbase ci --mode report --base REV`)")
    payload = _payload(env.get("GITHUB_EVENT_PATH", ""))
    repo_obj = payload.get("repository")
    default_branch = _opt_str(repo_obj, "default_branch") if isinstance(repo_obj, dict) \
        else None
    repository = env.get("GITHUB_REPOSITORY", "")
    if repository and repository.count("/") != 1:
        raise UsageError(f"GITHUB_REPOSITORY is not owner/name: {repository!r}")
    return CiEvent(
        name=name,
        repository=repository,
        api_url=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
        server_url=(env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
        sha=env.get("GITHUB_SHA", ""),
        ref=env.get("GITHUB_REF", ""),
        base_ref=env.get("GITHUB_BASE_REF", ""),
        head_ref=env.get("GITHUB_HEAD_REF", ""),
        run_id=env.get("GITHUB_RUN_ID", ""),
        default_branch=default_branch,
        step_summary=_opt_path(env.get("GITHUB_STEP_SUMMARY")),
        output=_opt_path(env.get("GITHUB_OUTPUT")),
        pull_request=_pull_request(payload, repository) if name in PR_EVENTS else None,
        workflow_run=_workflow_run(payload) if name == "workflow_run" else None,
        before=_opt_str(payload, "before") if name == "push" else None,
    )


def _payload(path: str) -> dict[str, Any]:
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_bytes())
    except OSError as exc:
        raise UsageError(f"GITHUB_EVENT_PATH: cannot read {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise UsageError(f"GITHUB_EVENT_PATH: {path} is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise UsageError(f"GITHUB_EVENT_PATH: {path} is not a JSON object")
    return data


def _pull_request(payload: dict[str, Any], repository: str) -> PullRequest:
    pr = payload.get("pull_request")
    if not isinstance(pr, dict):
        raise UsageError("the event payload has no pull_request object")
    head, base = pr.get("head"), pr.get("base")
    if not isinstance(head, dict) or not isinstance(base, dict):
        raise UsageError("the event's pull_request lacks head or base")
    head_repo_obj = head.get("repo")
    head_repo = _opt_str(head_repo_obj, "full_name") if isinstance(head_repo_obj, dict) \
        else None
    number = pr.get("number", payload.get("number"))
    if not isinstance(number, int) or isinstance(number, bool):
        raise UsageError("the event's pull_request has no number")
    return PullRequest(
        number=number,
        head_sha=_sha(head, "head.sha"),
        head_ref=_opt_str(head, "ref") or "",
        head_repo=head_repo or "",
        base_sha=_sha(base, "base.sha"),
        base_ref=_opt_str(base, "ref") or "",
        # A deleted fork has no head repo at all; treat it as a fork.
        fork=head_repo is None or head_repo.lower() != repository.lower(),
    )


def _workflow_run(payload: dict[str, Any]) -> WorkflowRun:
    run = payload.get("workflow_run")
    if not isinstance(run, dict):
        raise UsageError("the event payload has no workflow_run object")
    run_id = run.get("id")
    if not isinstance(run_id, int) or isinstance(run_id, bool):
        raise UsageError("the event's workflow_run has no id")
    prs = run.get("pull_requests")
    numbers = tuple(p["number"] for p in prs if isinstance(p, dict)
                    and isinstance(p.get("number"), int)) if isinstance(prs, list) else ()
    return WorkflowRun(run_id, _sha(run, "workflow_run.head_sha", key="head_sha"),
                       _opt_str(run, "event") or "", _opt_str(run, "conclusion"), numbers)


def is_sha(value: str) -> bool:
    return len(value) in (40, 64) and all(c in "0123456789abcdef" for c in value)


def _sha(obj: dict[str, Any], what: str, key: str = "sha") -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not is_sha(value):
        raise UsageError(f"the event's {what} is not a commit id: {value!r}")
    return value


def _opt_str(obj: Any, key: str) -> str | None:
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, str) else None


def _opt_path(value: str | None) -> Path | None:
    return Path(value) if value else None
