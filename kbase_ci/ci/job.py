"""`kbase ci`: what a GitHub Actions job runs (docs/action.md).

Modes: `index` (push to the default branch: check, build the index, publish it),
`report` (a PR: head against merge base, outputs, annotations, the PR comment),
`comment` (the `workflow_run` companion: post the comment from a PR run's artifact),
and `auto`, which picks one from `GITHUB_EVENT_NAME`. The job's log lines on stdout are
part of what it produces (the runner reads workflow annotations from them).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kbase_ci.ci.artifact import read_artifact
from kbase_ci.ci.cireport import CiReport, FailOn
from kbase_ci.ci.comment import CommentResult, pull_numbers_for, upsert_comment
from kbase_ci.ci.event import PR_EVENTS, CiEvent, read_event
from kbase_ci.ci.github import GitHubClient
from kbase_ci.ci.indexjob import build_and_publish
from kbase_ci.ci.outputs import append_step_summary, set_outputs, write_report_dir
from kbase_ci.ci.prreport import Context, compare, snapshot
from kbase_ci.ci.render import MARKER, annotation_lines, comment_body
from kbase_ci.ci.revisions import commit_of, merge_base, pr_range
from kbase_ci.errors import EXIT_FINDINGS, EXIT_OK, PublishGaveUp, UsageError
from kbase_ci.git.indexbranch import BRANCH
from kbase_ci.git.repo import git_dir, toplevel
from kbase_ci.index.publish import describe
from kbase_ci.parsed import Severity
from kbase_ci.report.escape import command_data, log_text, stop_commands

_LOGGED_FINDINGS = 50


@dataclass(frozen=True)
class JobOptions:
    """What `kbase ci` was asked (its command-line options)."""

    root: Path
    mode: str = "auto"
    index_branch: str = BRANCH
    remote: str = "origin"
    fail_on: FailOn = "new"
    fail_level: Severity = "error"
    """`warning`: warnings fail the run too (`--fail-on new,warning`)."""
    comment: bool = True
    comment_author: str | None = None
    out: Path | None = None
    artifact: Path | None = None
    model: Path | None = None
    base: str | None = None
    head: str | None = None
    annotations: int = 10
    no_cache: bool = False
    index_cache: Path | None = None
    """Index mode: the folder the action restored this workflow's previous build into
    (from the default branch's Actions cache); the build starts from it and leaves the new
    index there for the action to save."""


def _mode(requested: str, event: CiEvent | None, local: bool) -> str:
    if requested != "auto":
        return requested
    if event is None:
        if local:
            return "report"
        raise UsageError("not running in GitHub Actions (GITHUB_EVENT_NAME is unset); "
                         "pass --base REV for a local PR report")
    if event.name == "workflow_run":
        return "comment"
    if event.name in PR_EVENTS or local:
        return "report"
    return "index" if event.on_default_branch else "report"


def run_job(args: JobOptions, env: Mapping[str, str]) -> int:
    """Run the job the options and the runner's environment ask for; the exit status."""
    event = read_event(env) if env.get("GITHUB_EVENT_NAME") else None
    mode = _mode(args.mode, event, args.base is not None)
    if mode == "comment":
        return _companion(args, event, env)
    root = args.root
    repo = toplevel(root)
    if repo is None:
        raise UsageError(f"kbase ci needs a git repository; {root} is not in one")
    report = _report(args, event, root, repo, mode)
    out_dir = _out_dir(args, env)
    more = event.run_url if event is not None else None
    write_report_dir(report, out_dir, root=root, repo_root=repo, more=more)
    _log(report, args.annotations, out_dir)
    outputs = {"report-dir": str(out_dir), "new": str(len(report.with_status("new"))),
               "fixed": str(len(report.with_status("fixed"))),
               "failing": str(report.failing), "verdict": "fail" if report.failing else "pass",
               "comment": "skipped"}
    status = EXIT_FINDINGS if report.failing else EXIT_OK
    try:
        if event is not None and event.step_summary is not None:
            append_step_summary(event.step_summary, report, more)
        if report.pr_number is not None and args.comment and event is not None:
            result = _post(args, event, env, report.pr_number, comment_body(report, more))
            outputs["comment"] = result.status if result else "skipped"
        if mode == "index":
            outputs.update(_index(args, root))
    finally:  # the outputs say what was done, also when an error ends the job
        if event is not None and event.output is not None:
            set_outputs(event.output, outputs)
    return status


def _out_dir(args: JobOptions, env: Mapping[str, str]) -> Path:
    # abspath, not resolve(): a symbolic link on the way is refused, not followed.
    if args.out is not None:
        return Path(os.path.abspath(args.out))
    temp = env.get("RUNNER_TEMP")
    return Path(os.path.abspath(Path(temp) / "kbase-report" if temp else "kbase-report"))


def _report(args: JobOptions, event: CiEvent | None, root: Path, repo: Path,
            mode: str) -> CiReport:
    pr = event.pull_request if event is not None else None
    ctx = Context(event.name if event else "local", event.repository if event else "",
                  event.server_url if event else "https://github.com",
                  pr.number if pr is not None and mode == "report" else None, args.fail_on,
                  args.fail_level)
    use_cache = not args.no_cache
    if args.base is not None:
        head = commit_of(repo, args.head or "HEAD")
        base = merge_base(repo, commit_of(repo, args.base), head, args.remote)
        return compare(root, base, head, ctx, use_cache=use_cache)
    if pr is not None and mode == "report":
        base, head = pr_range(repo, pr.base_sha, pr.head_sha, args.remote)
        return compare(root, base, head, ctx, use_cache=use_cache)
    head = commit_of(repo, args.head or "HEAD")
    return snapshot(root, head, ctx, use_cache=use_cache)


def _log(report: CiReport, per_level: int, out_dir: Path) -> None:
    out = sys.stdout
    for line in annotation_lines(report, lambda p: report.vault_prefix + p, per_level):
        out.write(line + "\n")
    new = report.with_status("new") if report.base else report.with_status("present")
    if new:  # note text in plain log lines must not be read as workflow commands
        with stop_commands(out):
            for f in new[:_LOGGED_FINDINGS]:
                out.write(log_text(f"{report.vault_prefix}{f.path}:{f.line}:{f.col}: "
                                   f"{f.code} {f.message}") + "\n")
            if len(new) > _LOGGED_FINDINGS:
                out.write(f"... and {len(new) - _LOGGED_FINDINGS} more\n")
    counts = ", ".join(f"{len(report.with_status(s))} {s}" for s in
                       (("new", "fixed", "pre-existing") if report.base else ("present",)))
    out.write(f"kbase ci: {counts}; {report.failing} failing (--fail-on "
              f"{report.fail_on},{report.fail_level}); report in {out_dir}\n")


def _client(event: CiEvent, env: Mapping[str, str]) -> GitHubClient | None:
    token = env.get("GITHUB_TOKEN") or env.get("GH_TOKEN")
    if not token or not event.repository:
        return None
    return GitHubClient(event.api_url, token, event.repository)


def _post(args: JobOptions, event: CiEvent, env: Mapping[str, str], number: int,
          body: str) -> CommentResult | None:
    client = _client(event, env)
    if client is None:
        print("kbase ci: no GITHUB_TOKEN; the PR comment is left to the companion workflow")
        return None
    result = upsert_comment(client, number, body, MARKER, author=args.comment_author)
    if result.status == "forbidden":
        print(f"::notice title=kbase::This token may not comment on PR #{number} (a fork PR "
              "gets a read-only token); the report folder is for the workflow_run companion.")
    else:
        print(f"kbase ci: PR #{number} comment {result.status} {result.url}")
    return result


def _index(args: JobOptions, root: Path) -> dict[str, str]:
    # Built inside the git directory: never in the work tree, so never committed by a
    # later step, and outside `.git/kbase` (the parse cache the action caches); or in the
    # cache folder the action restored and saves.
    out = build_and_publish(root, git_dir(root) / "kbase-ci" / "index",
                            branch=args.index_branch,
                            remote=args.remote, model=args.model, cache=args.index_cache)
    b, p = out.build, out.publish
    if out.cache_note is not None:
        print(f"::warning title=kbase::{command_data(out.cache_note)}: not used; the index "
              "is built from nothing and not left for the cache")
    if out.seeded_from is not None:
        print(f"kbase ci: index built from source, starting from this workflow's cached "
              f"build of {out.seeded_from[:12]}: {len(b.shards_built)} shard(s) built, "
              f"{len(b.shards_reused)} unchanged")
    else:
        print(f"kbase ci: index built from source ({len(b.shards_built)} shard(s) built)")
    if b.previous:
        print(f"kbase ci: note: {log_text(b.previous)}")
    if b.embeddings_reason:
        print(f"kbase ci: note: {log_text(b.embeddings_reason)}")
    for line in out.scopes:
        print(f"kbase ci: {log_text(line)}")
    print(describe(p))
    outputs = {"index-status": p.status, "index-commit": p.commit or ""}
    if args.index_cache is not None and out.cache_note is None:
        outputs["index-cache"] = str(out.out_dir)
    if not p.ok:
        raise PublishGaveUp(describe(p))
    return outputs


def _companion(args: JobOptions, event: CiEvent | None, env: Mapping[str, str]) -> int:
    if event is None or event.workflow_run is None:
        raise UsageError("comment mode runs on a workflow_run event")
    run = event.workflow_run
    if run.event not in PR_EVENTS:
        print(f"kbase ci: the run was for a {run.event} event, not a PR; nothing to post")
        return EXIT_OK
    folder = args.artifact or args.out
    if folder is None:
        raise UsageError("comment mode needs --artifact DIR (the downloaded report folder)")
    report = read_artifact(Path(folder), head_sha=run.head_sha, repository=event.repository,
                           server_url=event.server_url)
    client = _client(event, env)
    if client is None:
        raise UsageError("comment mode needs GITHUB_TOKEN with pull-requests: write")
    more = f"{event.server_url}/{event.repository}/actions/runs/{run.id}"
    numbers = pull_numbers_for(client, run.head_sha)
    if not numbers:
        print(f"kbase ci: no open PR has head {run.head_sha[:12]}; nothing to post")
    statuses = []
    for n in numbers:
        body = comment_body(report._replace(pr_number=n), more)
        result = upsert_comment(client, n, body, MARKER, author=args.comment_author)
        if result.status == "forbidden":
            raise UsageError(f"the token may not comment on PR #{n}: {result.detail}; "
                             "give the companion job `pull-requests: write`")
        print(f"kbase ci: PR #{n} comment {result.status} {result.url}")
        statuses.append(f"{n}:{result.status}")
    if event.step_summary is not None:
        append_step_summary(event.step_summary, report, more)
    if event.output is not None:
        set_outputs(event.output, {"comment": " ".join(statuses) or "none"})
    return EXIT_OK
