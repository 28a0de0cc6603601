"""What the runner says about this run: the `GITHUB_*` variables and the event payload.

Only the keys `kbase ci` uses are read (`PayloadJson`), each checked for its type by
`typedjson.decode`, so the rest of the code never indexes into raw JSON. The payload is
GitHub's, but a PR's title, branch names and the like are written by whoever opened it:
none of them is used for anything but display, and display escapes them.
"""

# No `from __future__ import annotations`: the records' annotations are evaluated once,
# here, instead of compiled and evaluated again by the first decode of every process
# (`typedjson.decoding._hints`).

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from kbase_ci.errors import InputRefused, UsageError
from kbase_ci.state.bounded import load_json_file
from kbase_ci.typedjson import Record, ShapeError, decode, matching

PR_EVENTS = ("pull_request", "pull_request_target")
MAX_EVENT_BYTES = 64 << 20
"""GitHub caps a webhook payload at 25 MB."""


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


Sha = Annotated[str, matching(r"[0-9a-f]{40}(?:[0-9a-f]{24})?", "a commit id")]


class RepoJson(Record):
    full_name: str | None = None
    default_branch: str | None = None


class RefJson(Record):
    sha: Sha
    ref: str = ""
    repo: RepoJson | None = None
    """None for a deleted fork."""


class PullRequestJson(Record):
    head: RefJson
    base: RefJson
    number: int | None = None
    """Else the payload's `number`."""


class NumberJson(Record):
    number: int


class WorkflowRunJson(Record):
    id: int
    head_sha: Sha
    event: str = ""
    conclusion: str | None = None
    pull_requests: tuple[NumberJson, ...] = ()


class PayloadJson(Record):
    """The keys of `GITHUB_EVENT_PATH` that `kbase ci` reads (every other is ignored)."""

    repository: RepoJson | None = None
    pull_request: PullRequestJson | None = None
    number: int | None = None
    workflow_run: WorkflowRunJson | None = None
    before: str | None = None


def read_event(env: Mapping[str, str]) -> CiEvent:
    """The event of this run; UsageError when not in GitHub Actions or the payload is bad."""
    name = env.get("GITHUB_EVENT_NAME", "")
    if not name:
        raise UsageError("GITHUB_EVENT_NAME is not set: not running in GitHub Actions "
                         "(locally, use `kbase ci --mode report --base REV`)")
    payload = _payload(env.get("GITHUB_EVENT_PATH", ""))
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
        default_branch=payload.repository.default_branch if payload.repository else None,
        step_summary=_opt_path(env.get("GITHUB_STEP_SUMMARY")),
        output=_opt_path(env.get("GITHUB_OUTPUT")),
        pull_request=_pull_request(payload, repository) if name in PR_EVENTS else None,
        workflow_run=_workflow_run(payload) if name == "workflow_run" else None,
        before=payload.before if name == "push" else None,
    )


def _payload(path: str) -> PayloadJson:
    if not path:
        return PayloadJson()
    try:  # the runner's file: capped, decoded under the reader's budget
        data = load_json_file(path, MAX_EVENT_BYTES)
    except InputRefused as exc:
        raise UsageError(f"GITHUB_EVENT_PATH: {exc}") from None
    except OSError as exc:
        raise UsageError(f"GITHUB_EVENT_PATH: cannot read {path}: {exc.strerror}") from exc
    try:
        return decode(PayloadJson, data)
    except ShapeError as exc:
        raise UsageError(f"GITHUB_EVENT_PATH: {path}: {exc}") from None


def _pull_request(payload: PayloadJson, repository: str) -> PullRequest:
    pr = payload.pull_request
    if pr is None:
        raise UsageError("the event payload has no pull_request object")
    head_repo = pr.head.repo.full_name if pr.head.repo is not None else None
    number = pr.number if pr.number is not None else payload.number
    if number is None:
        raise UsageError("the event's pull_request has no number")
    return PullRequest(
        number=number, head_sha=pr.head.sha, head_ref=pr.head.ref, head_repo=head_repo or "",
        base_sha=pr.base.sha, base_ref=pr.base.ref,
        # A deleted fork has no head repo at all; treat it as a fork.
        fork=head_repo is None or head_repo.lower() != repository.lower(),
    )


def _workflow_run(payload: PayloadJson) -> WorkflowRun:
    run = payload.workflow_run
    if run is None:
        raise UsageError("the event payload has no workflow_run object")
    return WorkflowRun(run.id, run.head_sha, run.event, run.conclusion,
                       tuple(p.number for p in run.pull_requests))


def _opt_path(value: str | None) -> Path | None:
    return Path(value) if value else None
