"""Shared set-up for the `kbase ci` tests: the PR scenario repository, event files, and
running the real `kbase ci` in a subprocess with a runner-like environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES, GIT_ENV, REPO, git

SCENARIO = FIXTURES / "ci" / "pr-scenario"
EVENTS = FIXTURES / "ci" / "events"


def scenario_repo(dest: Path) -> tuple[Path, str, str]:
    """A repository whose `main` holds base/ and whose branch `pr` holds head/ on top.
    Returns (root, base commit, head commit); the work tree is at the head."""
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "config", "commit.gpgsign", "false")
    shutil.copytree(SCENARIO / "base", dest, dirs_exist_ok=True)
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "base")
    base = git(dest, "rev-parse", "HEAD").strip()
    git(dest, "checkout", "-q", "-b", "pr")
    git(dest, "rm", "-q", "-r", ".")
    shutil.copytree(SCENARIO / "head", dest, dirs_exist_ok=True)
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "pr")
    return dest, base, git(dest, "rev-parse", "HEAD").strip()


def commit_files(root: Path, files: dict[str, str], message: str) -> str:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


def event_file(dest: Path, name: str, **subs: str) -> Path:
    text = (EVENTS / f"{name}.json").read_text(encoding="utf-8")
    for key, value in subs.items():
        text = text.replace(f"@{key.upper()}@", value)
    out = dest / f"{name}.json"
    out.write_text(text, encoding="utf-8")
    return out


def runner_env(tmp: Path, event_name: str, event_path: Path, *, sha: str,
               ref: str = "refs/heads/main", api_url: str = "", token: str | None = None,
               run_id: str = "101") -> dict[str, str]:
    """A GitHub-runner-like environment (files for the summary and the step outputs)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "GIT_", "RUNNER_")) and k != "GH_TOKEN"}
    summary, output = tmp / "step_summary.md", tmp / "github_output.txt"
    summary.touch()
    output.touch()
    env.update(GIT_ENV)
    env.update({
        "PYTHONPATH": str(REPO), "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path), "GITHUB_REPOSITORY": "octo/vault",
        "GITHUB_SERVER_URL": "https://github.example", "GITHUB_SHA": sha, "GITHUB_REF": ref,
        "GITHUB_RUN_ID": run_id, "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output), "RUNNER_TEMP": str(tmp), "HOME": str(tmp),
    })
    if api_url:
        env["GITHUB_API_URL"] = api_url
    if token is not None:
        env["GITHUB_TOKEN"] = token
    return env


def pr_env(tmp: Path, base: str, head: str, api_url: str, token: str,
           name: str = "pull_request") -> dict[str, str]:
    """The environment of a `pull_request` run for PR #7 of `head` against `base`, its
    files in a new folder `tmp`."""
    tmp.mkdir()
    return runner_env(tmp, "pull_request", event_file(tmp, name, head=head, base=base),
                      sha=head, ref="refs/pull/7/merge", api_url=api_url, token=token)


def run_ci(cwd: Path, env: dict[str, str], *args: str,
           timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kbase_ci", "ci", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def step_outputs(env: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in Path(env["GITHUB_OUTPUT"]).read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        out[key] = value
    return out
