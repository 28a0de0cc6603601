"""A change can switch checks off, but not unremarked (issue 38, item 5): a PR or a
commit that deletes a linked note and adds a `.kbase.yml` turning the link check off
(`checks.severity`, `checks.per_path`, or `vault.exclude` of every note) is told, in the
PR report and the comment (through a fake GitHub on 127.0.0.1) and in the hook's output,
that it changes how notes are judged and what the base's settings would have found.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kbase_ci.ci.render import MARKER
from tests.ci_support import pr_env, run_ci
from tests.conftest import git, run_kbase
from tests.fake_github import BOT, FakeGitHub, Token

TOKEN = "ghs_actions"
BASE = {"Old.md": "# Old\n\nText.\n", "B.md": "# B\n\nSee [[Old]].\n",
        "C.md": "# C\n\nAbout [[B]].\n"}
POLICIES = {
    "severity": "checks:\n  severity:\n    links: off\n",
    "per_path": "checks:\n  per_path:\n    \"**\": [links]\n",
    "exclude": "vault:\n  exclude: [\"**\"]\n",
}
MakeRepo = Callable[..., Path]


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    gh = FakeGitHub(tokens={TOKEN: Token(None)}).start()
    yield gh
    gh.stop()


def _pr(root: Path, policy: str) -> tuple[str, str]:
    """`main` at BASE; branch `pr` deletes Old.md and adds `policy` as `.kbase.yml`."""
    base = git(root, "rev-parse", "HEAD").strip()
    git(root, "checkout", "-q", "-b", "pr")
    git(root, "rm", "-q", "Old.md")
    (root / ".kbase.yml").write_text(policy, encoding="utf-8")
    git(root, "add", ".kbase.yml")
    git(root, "commit", "-q", "-m", "switch the link check off")
    return base, git(root, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("policy", list(POLICIES))
def test_the_pr_report_names_the_policy_change_and_what_the_base_would_find(
        tmp_path: Path, fake: FakeGitHub, make_repo: MakeRepo, policy: str) -> None:
    root = make_repo(BASE)
    base, head = _pr(root, POLICIES[policy])
    env = pr_env(tmp_path / "run", base, head, fake.api_url, TOKEN)
    proc = run_ci(root, env)
    assert proc.returncode == 0, proc.stderr  # not failed: said
    out = Path(env["RUNNER_TEMP"]) / "kbase-report"
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    changed = {"severity": ["checks"], "per_path": ["checks"], "exclude": ["vault"]}[policy]
    assert report["policy"]["sections"] == changed
    unseen = report["policy"]["unseen"]
    assert [(f["path"], f["line"], f["code"]) for f in unseen] == [("B.md", 3, "KB101")]
    assert "`Old.md` was deleted in this PR" in unseen[0]["message"]
    [comment] = [c for c in fake.comments.get(7, []) if MARKER in str(c["body"])
                 and c["user"]["login"] == BOT]  # type: ignore[index]
    body = str(comment["body"])
    assert "under the base's**" in body.splitlines()[1]
    assert "### `.kbase.yml` changes how notes are judged" in body
    assert "B.md:3" in body and "KB101" in body
    assert "changes how notes are judged" in Path(env["GITHUB_STEP_SUMMARY"]).read_text(
        encoding="utf-8")


def test_a_pr_whose_policy_change_hides_nothing_says_so(tmp_path: Path, fake: FakeGitHub,
                                                        make_repo: MakeRepo) -> None:
    root = make_repo(BASE)
    base = git(root, "rev-parse", "HEAD").strip()
    git(root, "checkout", "-q", "-b", "pr")
    (root / ".kbase.yml").write_text(POLICIES["severity"], encoding="utf-8")
    git(root, "add", ".kbase.yml")
    git(root, "commit", "-q", "-m", "links off, nothing broken")
    head = git(root, "rev-parse", "HEAD").strip()
    env = pr_env(tmp_path / "run", base, head, fake.api_url, TOKEN)
    assert run_ci(root, env).returncode == 0
    report = json.loads((Path(env["RUNNER_TEMP"]) / "kbase-report" / "report.json")
                        .read_text(encoding="utf-8"))
    assert report["policy"] == {"sections": ["checks"], "unseen": []}
    assert "✅ **kbase: no new problems**" in Path(env["GITHUB_STEP_SUMMARY"]).read_text(
        encoding="utf-8")


@pytest.mark.parametrize("policy", list(POLICIES))
def test_the_hook_says_what_heads_settings_would_find(make_repo: MakeRepo,
                                                      policy: str) -> None:
    root = make_repo(BASE)
    git(root, "rm", "-q", "Old.md")
    (root / ".kbase.yml").write_text(POLICIES[policy], encoding="utf-8")
    git(root, "add", ".kbase.yml")
    proc = run_kbase("check", "--staged", cwd=root)
    assert proc.returncode == 0, proc.stdout  # the commit's own policy holds
    assert "this commit changes how `.kbase.yml` judges notes" in proc.stderr
    assert "B.md:3:5: KB101 [[Old]]: `Old.md` was deleted in this commit" in proc.stderr
    data = json.loads(run_kbase("check", "--staged", "--format", "json", cwd=root).stdout)
    assert [f["code"] for f in data["policy_change"]["unseen"]] == ["KB101"]
