"""`kbase ci` against a real HTTP server standing in for the GitHub REST API.

One living comment: created once, updated on the next push, untouched when nothing
changed, never another user's; a read-only token (fork PR) is no failure; a 5xx is
retried once; the workflow_run companion finds a fork PR through the API and refuses
an artifact that is not for the run's commit.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kbase_ci.ci.github import GitHubClient, GitHubError
from kbase_ci.ci.render import MARKER
from tests.ci_support import (
    commit_files,
    event_file,
    run_ci,
    runner_env,
    scenario_repo,
    step_outputs,
)
from tests.conftest import git
from tests.fake_github import BOT, FakeGitHub, Token

GITHUB_TOKEN, READ_ONLY, PAT = "ghs_actions", "ghs_forkreadonly", "ghp_personal"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    gh = FakeGitHub(tokens={GITHUB_TOKEN: Token(None), READ_ONLY: Token(None, write=False),
                            PAT: Token("kbase-bot")}).start()
    yield gh
    gh.stop()


def _pr_env(tmp: Path, fake: FakeGitHub, base: str, head: str, token: str,
            name: str = "pull_request", run: int = 1) -> dict[str, str]:
    where = tmp / f"run{run}"
    where.mkdir()
    ev = event_file(where, name, head=head, base=base)
    return runner_env(where, "pull_request", ev, sha=head, ref="refs/pull/7/merge",
                      api_url=fake.api_url, token=token, run_id=str(run))


def _ours(fake: FakeGitHub, number: int, author: str = BOT) -> list[dict[str, object]]:
    return [c for c in fake.comments.get(number, [])
            if MARKER in str(c["body"]) and c["user"]["login"] == author]  # type: ignore[index]


def test_comment_created_updated_then_left_alone(tmp_path: Path, fake: FakeGitHub) -> None:
    root, base, head = scenario_repo(tmp_path / "vault")
    # 130 comments by people (two pages), one of them quoting our marker.
    for i in range(129):
        fake.add_comment(7, f"user{i}", f"comment {i}")
    spoof = fake.add_comment(7, "mallory", f"{MARKER}\nfake report")

    env1 = _pr_env(tmp_path, fake, base, head, GITHUB_TOKEN, run=1)
    p1 = run_ci(root, env1)
    assert p1.returncode == 1, p1.stderr  # the PR adds a broken anchor: new finding
    assert [w[0] for w in fake.writes()] == ["POST"]
    assert step_outputs(env1)["comment"] == "created"
    ours = _ours(fake, 7)
    assert len(ours) == 1 and "New in this PR" in str(ours[0]["body"])
    assert spoof["body"] == f"{MARKER}\nfake report"
    pages = [r for r in fake.requests if r[0] == "GET" and r[1].endswith("/comments")]
    assert len(pages) == 2  # followed the Link header

    # Second push: the PR fixes its broken anchor; the comment is edited in place.
    head2 = commit_files(root, {"Alpha.md": "# Alpha\n\nAlpha links to [[Beta#How to use]] "
                                            "and back [[Home]].\n"}, "fix anchor")
    env2 = _pr_env(tmp_path, fake, base, head2, GITHUB_TOKEN, run=2)
    p2 = run_ci(root, env2)
    assert step_outputs(env2)["comment"] == "updated", p2.stdout + p2.stderr
    assert [w[0] for w in fake.writes()] == ["POST", "PATCH"]
    ours = _ours(fake, 7)
    assert len(ours) == 1 and head2 in str(ours[0]["body"])

    # Third run on the same head: same body, no write at all.
    env3 = _pr_env(tmp_path, fake, base, head2, GITHUB_TOKEN, run=3)
    p3 = run_ci(root, env3)
    assert step_outputs(env3)["comment"] == "unchanged", p3.stdout + p3.stderr
    assert [w[0] for w in fake.writes()] == ["POST", "PATCH"]
    assert spoof["body"] == f"{MARKER}\nfake report"
    assert len(fake.comments[7]) == 131


def test_personal_token_comments_as_its_user(tmp_path: Path, fake: FakeGitHub) -> None:
    root, base, head = scenario_repo(tmp_path / "vault")
    theirs = fake.add_comment(7, BOT, f"{MARKER}\nposted by the actions bot")
    p = run_ci(root, _pr_env(tmp_path, fake, base, head, PAT))
    assert "comment created" in p.stdout, p.stderr
    assert len(_ours(fake, 7, "kbase-bot")) == 1
    assert theirs["body"] == f"{MARKER}\nposted by the actions bot"


def test_fork_pr_read_only_token_still_writes_the_report(tmp_path: Path,
                                                         fake: FakeGitHub) -> None:
    root, base, head = scenario_repo(tmp_path / "vault")
    env = _pr_env(tmp_path, fake, base, head, READ_ONLY, name="pull_request-fork")
    p = run_ci(root, env, "--fail-on", "none")
    assert p.returncode == 0, p.stderr
    assert step_outputs(env)["comment"] == "forbidden"
    assert "::notice title=kbase::This token may not comment on PR #9" in p.stdout
    report = json.loads((Path(env["RUNNER_TEMP"]) / "kbase-report" / "report.json")
                        .read_text(encoding="utf-8"))
    assert report["pr_number"] == 9 and report["head"] == head
    for name in ("report.md", "report.sarif", "comment.md"):
        assert (Path(env["RUNNER_TEMP"]) / "kbase-report" / name).is_file()
    assert "New in this PR" in Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert fake.comments.get(9) is None


def test_a_5xx_is_retried_once(tmp_path: Path, fake: FakeGitHub) -> None:
    root, base, head = scenario_repo(tmp_path / "vault")
    fake.fail_next["POST"] = 1
    env = _pr_env(tmp_path, fake, base, head, GITHUB_TOKEN)
    p = run_ci(root, env)
    assert step_outputs(env)["comment"] == "created", p.stderr
    assert [w[2] for w in fake.writes()] == [502, 201]
    assert len(_ours(fake, 7)) == 1


def test_two_5xx_fail_with_the_report_written(tmp_path: Path, fake: FakeGitHub) -> None:
    root, base, head = scenario_repo(tmp_path / "vault")
    fake.fail_next["GET"] = 2
    env = _pr_env(tmp_path, fake, base, head, GITHUB_TOKEN)
    p = run_ci(root, env)
    assert p.returncode == 3 and "HTTP 502" in p.stderr
    assert (Path(env["RUNNER_TEMP"]) / "kbase-report" / "report.json").is_file()
    assert fake.comments.get(7) is None


def _companion(tmp: Path, fake: FakeGitHub, head: str, artifact: Path,
               token: str = GITHUB_TOKEN) -> tuple[int, str, dict[str, str]]:
    where = tmp / "companion"
    where.mkdir(exist_ok=True)
    ev = event_file(where, "workflow_run-fork", head=head)
    env = runner_env(where, "workflow_run", ev, sha="c" * 40, api_url=fake.api_url,
                     token=token, run_id="202")
    empty = where / "workspace"  # the companion has no checkout at all
    empty.mkdir(exist_ok=True)
    p = run_ci(empty, env, "--artifact", str(artifact))
    return p.returncode, p.stdout + p.stderr, env


def test_companion_posts_a_fork_report_found_by_head_sha(tmp_path: Path,
                                                         fake: FakeGitHub) -> None:
    root, base, head = scenario_repo(tmp_path / "vault")
    env = _pr_env(tmp_path, fake, base, head, READ_ONLY, name="pull_request-fork")
    run_ci(root, env)
    artifact = tmp_path / "artifact"
    shutil.copytree(Path(env["RUNNER_TEMP"]) / "kbase-report", artifact)
    fake.pulls = [{"number": 9, "state": "open", "head": {"sha": head}, "fork": True},
                  {"number": 3, "state": "open", "head": {"sha": "d" * 40}}]
    # A forged comment.md in the artifact is never posted: the body is re-rendered.
    (artifact / "comment.md").write_text(f"{MARKER}\n@everyone forged", encoding="utf-8")
    code, out, cenv = _companion(tmp_path, fake, head, artifact)
    assert code == 0, out
    ours = _ours(fake, 9)
    assert len(ours) == 1 and "forged" not in str(ours[0]["body"])
    assert "/actions/runs/202" not in str(ours[0]["body"]) or "more" in str(ours[0]["body"])
    assert step_outputs(cenv)["comment"] == "9:created"
    # The payload listed no PRs, and commits/{sha}/pulls hid the fork: open pulls found it.
    assert any(r[1].endswith("/pulls") for r in fake.requests)
    # Run again with the same artifact: nothing to change.
    code, out, cenv = _companion(tmp_path, fake, head, artifact)
    assert code == 0 and "comment unchanged" in out, out


def test_companion_refuses_an_artifact_for_another_commit(tmp_path: Path,
                                                          fake: FakeGitHub) -> None:
    root, base, head = scenario_repo(tmp_path / "vault")
    env = _pr_env(tmp_path, fake, base, head, READ_ONLY, name="pull_request-fork")
    run_ci(root, env)
    artifact = Path(env["RUNNER_TEMP"]) / "kbase-report"
    fake.pulls = [{"number": 9, "state": "open", "head": {"sha": "e" * 40}, "fork": True}]
    code, out, _ = _companion(tmp_path, fake, "e" * 40, artifact)
    assert code == 2 and "refusing to post it" in out
    data = json.loads((artifact / "report.json").read_text(encoding="utf-8"))
    data["head"] = "e" * 40
    data["findings"][0]["path"] = "../../../other/repo"
    (artifact / "report.json").write_text(json.dumps(data), encoding="utf-8")
    code, out, _ = _companion(tmp_path, fake, "e" * 40, artifact)
    assert code == 2 and "relative path inside the repository" in out
    assert [w for w in fake.writes() if w[2] < 400] == [] and fake.comments.get(9) is None


def test_push_to_a_feature_branch_reports_without_indexing(tmp_path: Path,
                                                           fake: FakeGitHub) -> None:
    root, _, head = scenario_repo(tmp_path / "vault")
    ev = event_file(tmp_path, "push", head=head, before="0" * 40)
    env = runner_env(tmp_path, "push", ev, sha=head, ref="refs/heads/pr",
                     api_url=fake.api_url, token=GITHUB_TOKEN)
    p = run_ci(root, env, "--fail-on", "all")
    assert p.returncode == 1, p.stderr
    out = step_outputs(env)
    assert "index-commit" not in out and out["verdict"] == "fail"
    assert git(root, "branch", "--list", "kbase-index") == ""
    assert fake.requests == []


def test_a_redirect_to_another_host_never_gets_the_token() -> None:
    # urllib follows redirects and copies every header, Authorization included; the API
    # answering 302 to another origin must not hand that origin the token.
    seen: list[str | None] = []

    class Elsewhere(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"login": "mallory"}')

        def log_message(self, *args: object) -> None:
            pass

    other = ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)

    class Api(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{other.server_port}/user")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    api = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    for server in (api, other):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = GitHubClient(f"http://127.0.0.1:{api.server_port}", "s3cret", "octo/vault",
                              retry_delay=0)
        with pytest.raises(GitHubError):
            client.comments(7)
    finally:
        api.shutdown()
        other.shutdown()
    assert all(h is None for h in seen), seen
