"""The composite action's `run:` steps, executed as a runner would execute them.

`uses:` steps (setup-python, caches) are skipped; every `run:` step gets its `env:`
with the expressions a runner would substitute, runs under `bash --noprofile --norc
-eo pipefail` in the workspace, with its own GITHUB_OUTPUT file, GITHUB_STEP_SUMMARY
and the event file. `python` on PATH is a throwaway venv, so the install step really
installs the action's package from `github.action_path` (a copy of this repository).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.ci_support import event_file, runner_env, scenario_repo
from tests.conftest import REPO, locked_cache
from tests.fake_github import BOT, FakeGitHub, Token

pytestmark = pytest.mark.slow
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@pytest.fixture(scope="module")
def venv_bin() -> Iterator[Path]:
    """A venv with the package's dependencies, kept between test runs (keyed by the
    dependency list); the action's install step then installs kbase-ci itself into it,
    so this module holds it (locked) while its tests run."""
    key = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()[:12]
    with locked_cache(f"action-venv-{key}") as venv:
        if not (venv / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        yield venv / "bin"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    gh = FakeGitHub(tokens={"ghs_actions": Token(None)}).start()
    yield gh
    gh.stop()


class Runner:
    """Evaluates the few expressions action.yml uses, and runs its steps in order."""

    def __init__(self, action: dict[str, Any], inputs: dict[str, str], context: dict[str, str],
                 env: dict[str, str], workspace: Path, tmp: Path) -> None:
        self.action, self.context, self.env = action, context, env
        self.workspace, self.tmp = workspace, tmp
        self.inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
        self.inputs = {k: self.expand(v) for k, v in self.inputs.items()}
        self.inputs.update(inputs)
        self.steps: dict[str, dict[str, str]] = {}
        self.ran: list[str] = []

    def value(self, expr: str) -> str:
        if expr in self.context:
            return self.context[expr]
        if expr.startswith("inputs."):
            return self.inputs[expr.removeprefix("inputs.")]
        if m := re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr):
            return self.steps.get(m.group(1), {}).get(m.group(2), "")
        raise AssertionError(f"expression the simulation does not know: {expr}")

    def expand(self, text: str) -> str:
        return _EXPR.sub(lambda m: self.value(m.group(1)), text)

    def condition(self, expr: str) -> bool:
        expr = expr.strip()
        if m := _EXPR.fullmatch(expr):
            expr = m.group(1)
        return all(self.term(part.strip()) for part in expr.split("&&"))

    def term(self, expr: str) -> bool:
        if expr == "!cancelled()":  # the simulated run is never cancelled
            return True
        m = re.fullmatch(r"(\S+) != ''", expr)
        assert m, f"condition the simulation does not know: {expr}"
        return self.value(m.group(1)) != ""

    def run_all(self) -> subprocess.CompletedProcess[str]:
        last: subprocess.CompletedProcess[str] | None = None
        for i, step in enumerate(self.action["runs"]["steps"]):
            if "if" in step and not self.condition(step["if"]):
                continue
            if "uses" in step:
                continue
            last = self.run_step(i, step)
            self.ran.append(step.get("id") or step["name"])
            if last.returncode != 0:
                break
        assert last is not None
        return last

    def run_step(self, i: int, step: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        output = self.tmp / f"output-{i}"
        output.touch()
        script = self.tmp / f"step-{i}.sh"
        script.write_text(step["run"], encoding="utf-8")
        env = {**self.env, "GITHUB_OUTPUT": str(output),
               **{k: self.expand(str(v)) for k, v in (step.get("env") or {}).items()}}
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                              cwd=self.workspace, env=env, capture_output=True, text=True,
                              timeout=900, check=False)
        if "id" in step:
            values = {}
            for line in output.read_text(encoding="utf-8").splitlines():
                key, _, value = line.partition("=")
                values[key] = value
            self.steps[step["id"]] = values
        return proc


def _action_copy(dest: Path) -> Path:
    """What `uses: owner/kbase-ci@sha` checks out: the repository, without local state."""
    shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns(
        ".git", "*.egg-info", "build", "__pycache__", ".*_cache", "tests", "bench"))
    return dest


def test_composite_action_runs_a_pr_report(tmp_path: Path, venv_bin: Path,
                                           fake: FakeGitHub) -> None:
    workspace, base, head = scenario_repo(tmp_path / "workspace")
    action_path = _action_copy(tmp_path / "action")
    action = YAML(typ="safe").load((action_path / "action.yml").read_text(encoding="utf-8"))
    runner_tmp = tmp_path / "runner"
    runner_tmp.mkdir()
    ev = event_file(runner_tmp, "pull_request", head=head, base=base)
    env = runner_env(runner_tmp, "pull_request", ev, sha=head, ref="refs/pull/7/merge",
                     api_url=fake.api_url)
    env.update({"PATH": f"{venv_bin}{os.pathsep}{env['PATH']}", "RUNNER_OS": "Linux",
                "GITHUB_WORKSPACE": str(workspace), "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    env.pop("PYTHONPATH")  # the installed package must be what runs
    context = {"github.action_path": str(action_path), "github.token": "ghs_actions",
               "github.sha": head, "runner.os": "Linux",
               "github.event.repository.default_branch": "main"}
    runner = Runner(action, {"fail-on": "none"}, context, env, workspace, runner_tmp)
    proc = runner.run_all()
    if "install" in runner.ran[-1].lower() and proc.returncode != 0:
        pytest.skip(f"pip could not install the action's package: {proc.stderr[-300:]}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert runner.ran == ["locate", "Install kbase-ci", "model-name", "index-cache", "run"]
    # A pull request's run neither restores nor saves the index cache (no folder named).
    assert runner.steps["index-cache"].get("dir", "") == "", runner.steps["index-cache"]
    # A PR report embeds nothing: no model cache is restored for it.
    assert runner.steps["model-name"]["model"] == ""
    # The `ci` extra alone ran it: no MCP server, no ONNX runtime in the venv.
    listed = subprocess.run([str(venv_bin / "python"), "-m", "pip", "list", "--format=json"],
                            capture_output=True, text=True, check=True).stdout
    names = {d["name"].lower() for d in json.loads(listed)}
    assert {"numpy", "bm25s", "kbase-ci"} <= names and not names & {"mcp", "onnxruntime"}
    locate = runner.steps["locate"]
    assert locate["parse-cache"].endswith("/.git/kbase")
    assert locate["pip-key"].startswith("kbase-pip-Linux-py3.12-ci-")
    outputs = {k: runner.expand(v["value"]) for k, v in action["outputs"].items()}
    report_dir = Path(outputs["report-dir"])
    assert (report_dir / "report.json").is_file() and (report_dir / "report.sarif").is_file()
    assert outputs["new"] == "2" and outputs["verdict"] == "pass"
    assert outputs["comment"] == "created"
    assert [c["user"]["login"] for c in fake.comments[7]] == [BOT]
    assert "::error file=Alpha.md,line=3" in proc.stdout
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
    assert "New in this PR (2)" in summary


def test_bad_comment_input_is_refused_before_running(tmp_path: Path, venv_bin: Path) -> None:
    action = YAML(typ="safe").load((REPO / "action.yml").read_text(encoding="utf-8"))
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    script = tmp_path / "run.sh"
    script.write_text(step["run"], encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "KBASE_MODE": "auto", "KBASE_INDEX_BRANCH": "x",
           "KBASE_FAIL_ON": "new", "KBASE_COMMENT": "yes; rm -rf /", "KBASE_MODEL_PATH": "",
           "KBASE_WORKING_DIRECTORY": ".", "KBASE_ARTIFACT_DIR": ""}
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "::error title=kbase::input comment must be true or false" in proc.stdout


def test_a_push_keys_the_model_cache_by_the_configured_model(tmp_path: Path) -> None:
    """The model cache of an index build is keyed by the model `.kbase.yml` names (the
    default when it names none), so a push does not download it on every run."""
    action = YAML(typ="safe").load((REPO / "action.yml").read_text(encoding="utf-8"))
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "model-name")
    script = tmp_path / "model.sh"
    script.write_text(step["run"], encoding="utf-8")
    vault = tmp_path / "vault"
    vault.mkdir()
    keys = []
    for config in ("", "embeddings:\n  model: acme/other-model\n"):
        (vault / ".kbase.yml").write_text(config, encoding="utf-8")
        output = tmp_path / "output"
        output.write_text("", encoding="utf-8")
        # `python`: this venv's (kbase installed), as after the action's install step.
        here = Path(sys.executable).parent
        env = {"PATH": f"{here}{os.pathsep}{os.environ['PATH']}", "KBASE_MODEL": "",
               "KBASE_MODE": "auto", "GITHUB_EVENT_NAME": "push", "RUNNER_OS": "Linux",
               "KBASE_WORKING_DIRECTORY": str(vault), "GITHUB_OUTPUT": str(output),
               "HOME": str(tmp_path)}
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail",
                               str(script)], cwd=tmp_path, env=env, capture_output=True,
                              text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        got = dict(line.split("=", 1) for line in output.read_text().splitlines())
        keys.append((got["model"], got["model-key"]))
    assert keys[0][0] == "minishlab/potion-base-8M" and keys[1][0] == "acme/other-model"
    assert keys[0][1] != keys[1][1] and keys[0][1].startswith("kbase-model-Linux-")
