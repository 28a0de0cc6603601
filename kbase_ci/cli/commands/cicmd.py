"""`kbase ci`: what a GitHub Actions job runs (the job itself: `kbase_ci.ci.job`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from kbase_ci.cli.common import vault_root
from kbase_ci.git.indexbranch import BRANCH


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "ci", help="run in GitHub Actions: index on push, report and comment on PRs",
        description="Reads GITHUB_EVENT_NAME, GITHUB_EVENT_PATH and friends. On a push to "
                    "the default branch: check, build the index, publish it. On a PR: "
                    "compare the head with its merge base, write report.md/json/sarif, "
                    "annotations, the step summary and one PR comment. Exit 0 pass, 1 "
                    "findings under --fail-on (or a failed publish), 2 usage, 3 API error.")
    p.add_argument("--mode", choices=["auto", "index", "report", "comment"], default="auto",
                   help="default: from the event (workflow_run means comment)")
    p.add_argument("--index-branch", default=BRANCH, metavar="BRANCH")
    p.add_argument("--remote", default="origin", help="remote to fetch from and publish to")
    p.add_argument("--fail-on", type=_fail_on, default=("new", "error"), metavar="WHICH",
                   help="findings that fail the run: new in this PR (default), all, none; "
                        "and at which severity: error (default) or warning, e.g. "
                        "`new,warning` (warnings are reported either way)")
    p.add_argument("--comment", action=argparse.BooleanOptionalAction, default=True,
                   help="post or update the PR comment (needs GITHUB_TOKEN)")
    p.add_argument("--comment-author", default=None, metavar="LOGIN",
                   help="login the comment is posted as, when the token cannot read /user "
                        "and is not a GITHUB_TOKEN (an app: `my-app[bot]`)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR",
                   help="report folder (default: $RUNNER_TEMP/kbase-report, else "
                        "./kbase-report)")
    p.add_argument("--artifact", type=Path, default=None, metavar="DIR",
                   help="comment mode: the downloaded report folder, read as data")
    p.add_argument("--model", type=Path, default=None, metavar="PATH",
                   help="embedding model folder (model2vec or ONNX) for the index build")
    p.add_argument("--base", default=None, metavar="REV",
                   help="report on HEAD (or --head) against its merge base with REV, "
                        "without GitHub")
    p.add_argument("--head", default=None, metavar="REV")
    p.add_argument("--annotations", type=int, default=10, metavar="N",
                   help="annotations per level (GitHub shows 10 per step)")
    p.add_argument("--no-cache", action="store_true", help="ignore the parse cache")
    p.add_argument("--index-cache", type=Path, default=None, metavar="DIR",
                   help="index mode: build the index in DIR, starting from the index this "
                        "job left there on an earlier push (the action restores DIR from "
                        "the default branch's Actions cache and saves it afterwards); only "
                        "shards whose notes changed are built again")


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.ci.job import JobOptions, run_job

    return run_job(JobOptions(
        root=vault_root(args), mode=args.mode, index_branch=args.index_branch,
        remote=args.remote, fail_on=args.fail_on[0], fail_level=args.fail_on[1],
        comment=args.comment,
        comment_author=args.comment_author, out=args.out, artifact=args.artifact,
        model=args.model, base=args.base, head=args.head, annotations=args.annotations,
        no_cache=args.no_cache, index_cache=args.index_cache), os.environ)


_SCOPES = ("new", "all", "none")
_LEVELS = ("error", "warning")


def _fail_on(value: str) -> tuple[str, str]:
    """`new`, `warning`, `all,warning`...: (which findings, from which severity on)."""
    scope, level = "new", "error"
    for word in (w.strip() for w in value.split(",") if w.strip()):
        if word in _SCOPES:
            scope = word
        elif word in _LEVELS:
            level = word
        else:
            raise argparse.ArgumentTypeError(
                f"{word!r} is none of {', '.join(_SCOPES + _LEVELS)}")
    return scope, level
