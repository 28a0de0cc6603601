"""action.yml's index cache (issue 40): which runs restore it, under which key, and that
only a folder `kbase ci` built into is saved. The "Locate the index cache" script runs
here with bash, as the runner runs it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import REPO

ACTION = REPO / "action.yml"


def _steps() -> list[dict[str, Any]]:
    doc = YAML(typ="safe").load(ACTION.read_text(encoding="utf-8"))
    return list(doc["runs"]["steps"])


def _step(**match: str) -> dict[str, Any]:
    return next(s for s in _steps() if all(s.get(k, "").startswith(v) for k, v in match.items()))


def _locate(tmp: Path, event: str, ref: str, *, mode: str = "auto",
            default_branch: str = "main", enabled: str = "true",
            model: str = "") -> tuple[int, dict[str, str]]:
    out = tmp / "github_output"
    out.write_text("", encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "GITHUB_OUTPUT": str(out), "GITHUB_EVENT_NAME": event,
           "GITHUB_REF": ref, "RUNNER_TEMP": str(tmp / "runner-temp"), "RUNNER_OS": "Linux",
           "KBASE_ACTION_PATH": str(REPO), "KBASE_MODE": mode, "KBASE_MODEL": model,
           "KBASE_DEFAULT_BRANCH": default_branch, "KBASE_INDEX_CACHE": enabled}
    proc = subprocess.run(["bash", "-c", _step(id="index-cache")["run"]], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    got = dict(line.partition("=")[::2] for line in out.read_text(encoding="utf-8").splitlines())
    return proc.returncode, got


@pytest.mark.parametrize(("event", "ref", "mode", "restores"), [
    ("push", "refs/heads/main", "auto", True),
    ("workflow_dispatch", "refs/heads/main", "auto", True),
    ("push", "refs/heads/feature", "auto", False),  # a report run
    ("pull_request", "refs/pull/7/merge", "auto", False),
    ("pull_request_target", "refs/heads/main", "auto", False),
    ("workflow_run", "refs/heads/main", "auto", False),
    ("pull_request", "refs/pull/7/merge", "report", False),
    ("push", "refs/heads/feature", "index", True),  # an index build asked for by name
])
def test_only_index_builds_restore_the_index_cache(tmp_path: Path, event: str, ref: str,
                                                    mode: str, restores: bool) -> None:
    code, got = _locate(tmp_path, event, ref, mode=mode)
    assert code == 0
    assert bool(got.get("dir")) == restores
    if restores:
        assert got["dir"] == str(tmp_path / "runner-temp" / "kbase-index-cache")
        assert got["key-prefix"].startswith("kbase-index-Linux-")


def test_the_key_names_the_code_and_the_model(tmp_path: Path) -> None:
    _, first = _locate(tmp_path, "push", "refs/heads/main", model="a/model")
    _, same = _locate(tmp_path, "push", "refs/heads/main", model="a/model")
    _, other = _locate(tmp_path, "push", "refs/heads/main", model="b/model")
    assert first["key-prefix"] == same["key-prefix"] != other["key-prefix"]


def test_the_input_turns_it_off_or_stops_the_step(tmp_path: Path) -> None:
    assert _locate(tmp_path, "push", "refs/heads/main", enabled="false") == (0, {})
    code, got = _locate(tmp_path, "push", "refs/heads/main", enabled="yes")
    assert code == 2 and not got


def test_restored_passed_and_saved_under_one_key() -> None:
    restore = _step(uses="actions/cache/restore@")
    save = _step(uses="actions/cache/save@")
    assert restore["uses"].split("@")[1] == save["uses"].split("@")[1]  # one release
    assert restore["with"]["path"] == save["with"]["path"] == \
        "${{ steps.index-cache.outputs.dir }}"
    assert save["with"]["key"] == restore["with"]["key"]
    assert restore["with"]["restore-keys"] == "${{ steps.index-cache.outputs.key-prefix }}"
    # Saved only when `kbase ci` built the index in that folder (its output says so).
    assert "steps.run.outputs.index-cache != ''" in save["if"]
    run = _step(id="run")
    assert run["env"]["KBASE_INDEX_CACHE"] == "${{ steps.index-cache.outputs.dir }}"
    assert '--index-cache "$KBASE_INDEX_CACHE"' in run["run"]
    names = [s.get("id") or s.get("uses", "").split("@")[0] for s in _steps()]
    assert names.index("actions/cache/restore") < names.index("run") < \
        names.index("actions/cache/save")
