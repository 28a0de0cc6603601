"""Issue 22, output: hostile text in `.kbase.yml` or notes never becomes a live workflow
command, a clickable link in the PR comment, or a crash of the companion; and the
companion accepts every report kbase itself writes. Real `kbase` processes, the real
CI job with a runner-like environment, and a real HTTP server for the GitHub API."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kbase_ci.ci.cireport import from_json
from kbase_ci.errors import UsageError
from kbase_ci.report.escape import md_text, terminal_text
from tests.ci_support import event_file, run_ci, runner_env, step_outputs
from tests.conftest import git, kbase_process, write
from tests.fake_github import FakeGitHub, Token

Repo = Callable[..., Path]
TOKEN, READ_ONLY = "ghs_actions", "ghs_forkreadonly"


def _commands(stream: str) -> list[str]:
    """Lines GitHub Actions would run as workflow commands."""
    return [ln for ln in stream.splitlines() if ln.lstrip().startswith("::")]


@pytest.mark.parametrize("config", [
    'tags:\n  "x\\n::error title=Owned::pwned": 1\n',
    'scopes:\n  "s\\n::add-mask::secret": {include: [a]}\n',
    '"x\\r\\n::warning::w": 1\n',
])
def test_config_errors_never_print_a_workflow_command(make_repo: Repo, config: str) -> None:
    root = make_repo({".kbase.yml": config, "a.md": "# A\n"})
    proc = kbase_process("check", "--all", cwd=root)
    assert proc.returncode == 2, proc.stderr
    assert "KB900" in proc.stderr and "\\x0a::" in proc.stderr, proc.stderr
    assert _commands(proc.stderr) == [] and _commands(proc.stdout) == []


def test_terminal_text_defuses_escapes_bidi_and_commands() -> None:
    assert terminal_text("a\x1b[2Jb\rc\u202ed") == "a\\x1b[2Jb\\x0dc\\u202ed"
    assert terminal_text("::error::x") == "./::error::x"
    assert terminal_text("one\n  ::set-output", lines=True) == "one\n./  ::set-output"


def test_urls_in_note_text_are_not_links_in_the_comment(make_repo: Repo,
                                                        tmp_path: Path) -> None:
    root = make_repo({"a.md": "# A\n"})
    base = git(root, "rev-parse", "HEAD").strip()
    write(root, {"b.md": "# B\n\n[[Login at https://evil.example/login]] and "
                         "[[WWW.evil.example]] and [[hxxp://x]]\n"})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pr")
    head = git(root, "rev-parse", "HEAD").strip()
    env = runner_env(tmp_path, "pull_request",
                     event_file(tmp_path, "pull_request", head=head, base=base), sha=head)
    proc = run_ci(root, env, "--fail-on", "none", "--no-comment")
    assert proc.returncode == 0, proc.stderr
    out = Path(step_outputs(env)["report-dir"])
    comment = (out / "comment.md").read_text(encoding="utf-8")
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert "evil.example" in comment  # reported ...
    for text in (comment, summary):  # ... as text, never as a link GitHub would draw
        assert "https://evil" not in text and "WWW.evil" not in text
    assert md_text("see https://x.io") == "see https:\u200b//x.io"
    assert md_text("www.x.io") == "www\u200b.x.io"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    gh = FakeGitHub(tokens={TOKEN: Token(None), READ_ONLY: Token(None, write=False)}).start()
    yield gh
    gh.stop()


def _companion(tmp: Path, fake: FakeGitHub, head: str, artifact: Path
               ) -> tuple[int, str]:
    where = tmp / "companion"
    where.mkdir(exist_ok=True)
    env = runner_env(where, "workflow_run", event_file(where, "workflow_run-fork", head=head),
                     sha="c" * 40, api_url=fake.api_url, token=TOKEN, run_id="202")
    empty = where / "workspace"
    empty.mkdir(exist_ok=True)
    p = run_ci(empty, env, "--artifact", str(artifact))
    return p.returncode, p.stdout + p.stderr


def test_companion_posts_kbase_own_report_for_a_tab_in_a_name(make_repo: Repo, tmp_path: Path,
                                                              fake: FakeGitHub) -> None:
    root = make_repo({"a.md": "# A\n"})
    base = git(root, "rev-parse", "HEAD").strip()
    write(root, {"tab\tname.md": "# T\n\n[[missing]]\n", "back\\slash.md": "[[gone]]\n"})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "odd names")
    head = git(root, "rev-parse", "HEAD").strip()
    where = tmp_path / "pr"
    where.mkdir()
    env = runner_env(where, "pull_request",
                     event_file(where, "pull_request-fork", head=head, base=base), sha=head,
                     ref="refs/pull/7/merge", api_url=fake.api_url, token=READ_ONLY)
    assert run_ci(root, env).returncode == 1  # the broken links fail the PR run
    artifact = tmp_path / "artifact"
    shutil.copytree(Path(env["RUNNER_TEMP"]) / "kbase-report", artifact)
    fake.pulls = [{"number": 9, "state": "open", "head": {"sha": head}, "fork": True}]
    code, out = _companion(tmp_path, fake, head, artifact)
    assert code == 0, out
    body = str(fake.comments[9][0]["body"])
    assert "tab name.md" in body and "back\\\\slash.md" in body  # escaped, not refused
    assert "/tab%09name.md#L3" in body


def test_companion_refuses_a_deeply_nested_report(tmp_path: Path, fake: FakeGitHub) -> None:
    artifact = tmp_path / "artifact"
    artifact.mkdir()
    (artifact / "report.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    code, out = _companion(tmp_path, fake, "a" * 40, artifact)
    assert code == 2 and "nested too deeply" in out and "Traceback" not in out


@pytest.mark.parametrize("path", ["", "/etc/passwd", "a/../../b", "./a", ".git/config",
                                  "a//b", "nul\0.md"])
def test_companion_still_refuses_paths_git_cannot_name(path: str) -> None:
    data = {"format": "kbase-ci-report", "version": 1, "event": "pull_request",
            "repository": "o/r", "server_url": "https://github.com", "head": "a" * 40,
            "base": None, "pr_number": None, "vault_prefix": "", "fail_on": "new",
            "notes": 1, "changes": [], "findings": [
                {"status": "new", "path": path, "line": 1, "col": 1, "code": "KB101",
                 "check": "links", "severity": "error", "message": "m", "suggestion": None}],
            "orphans": {"total": 0, "new": [], "fixed": []},
            "gaps": {"total": 0, "new": [], "closed": []}, "handover": None,
            "notices": [], "graph": {"nodes": [], "changed": [], "edges": []}}
    with pytest.raises(UsageError, match="findings"):
        from_json(json.loads(json.dumps(data)))
