"""The suite's own isolation (tests/conftest.py `own_home`): each session, so each
pytest-xdist worker, runs in a home of its own, and nothing of the user's home reaches a
test (their git config, their hub cache, their pre-commit store)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from kbase_ci.state.hubcache import cache_root
from tests.conftest import PIP_CACHE


def test_the_home_is_this_sessions_own(tmp_path_factory: pytest.TempPathFactory) -> None:
    home = Path(os.environ["HOME"])
    assert home.is_relative_to(tmp_path_factory.getbasetemp())  # per worker under xdist
    assert Path.home() == home
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
                 "HF_HOME", "PRE_COMMIT_HOME"):
        assert Path(os.environ[name]).is_relative_to(home), name
    assert cache_root().is_relative_to(home)  # where kbase looks for downloaded models
    assert os.environ["PIP_CACHE_DIR"] == str(PIP_CACHE)  # pip's stays shared (pip locks it)


def test_git_sees_no_global_config(tmp_path: Path) -> None:
    proc = subprocess.run(["git", "config", "--global", "--list"], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert proc.stdout == ""  # a user's commit.gpgsign or hooksPath would be listed here
