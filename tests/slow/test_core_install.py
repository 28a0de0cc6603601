"""The core install (`pip install kbase-ci`, what the pre-commit hooks install) in a
virtual environment of its own: no search stack in it, the hook works, and every part
that needs an extra stops with the missing-extra guard's pip line (kbase_ci.extras),
whether reached as a command or imported as a library.

One venv per test session, built from this working tree's files as a wheel (not
editable: what users get). PyPI (or the machine's wheel cache) must be reachable, as
for every install; a failed install fails the test rather than skipping it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kbase_ci.cli.commandline import COMMAND_EXTRAS, commands
from kbase_ci.extras import EXTRAS, pip_line
from kbase_ci.query.tools.registry import COMMANDS as QUERIES
from kbase_ci.query.tools.registry import EXTRA as QUERY_EXTRA
from tests.conftest import GIT_ENV, git, source_tree, write

pytestmark = pytest.mark.slow

_TIMEOUT = 900
_SEARCH_STACK = {"numpy", "onnxruntime", "usearch", "mcp", "bm25s",
                 "huggingface-hub", "tokenizers", "rich", "pygments"}
# Each extra reached by importing kbase as a library: (module, the extra it reports).
_ENTRY_MODULES = (
    ("kbase_ci.index", "search"),
    ("kbase_ci.query.search", "search"),
    ("kbase_ci.scope.scopebuild", "search"),
    ("kbase_ci.index.transformer", "search"),  # the search extra is missing first
    ("kbase_ci.mcp.server", "mcp"),
    ("kbase_ci.ci.job", "ci"),
)
# The fewest arguments each query command parses with (the guard runs after parsing,
# so that `--help` works in a core install).
_ARGS = {"read": ["Home"], "links": ["Home"], "backlinks": ["Home"], "explore": ["Home"],
         "prerequisites": ["Home"], "search": ["links"], "graph": ["path", "Home", "Home"],
         "publish": [], "scope": ["list"], "concept": ["links"], "summarize": ["Home"],
         "compare": ["Home", "Home"]}


class Core:
    def __init__(self, venv: Path) -> None:
        self.venv = venv
        self.bin = venv / ("Scripts" if os.name == "nt" else "bin")

    def run(self, *cmd: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.update(GIT_ENV, HOME=str(cwd), NO_COLOR="1")
        exe = str(self.bin / cmd[0])
        return subprocess.run([exe, *cmd[1:]], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=_TIMEOUT, check=False)


@pytest.fixture(scope="session")
def core(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Core]:
    base = tmp_path_factory.mktemp("core-install")
    src = base / "kbase-ci"
    source_tree(src)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=_TIMEOUT)
    c = Core(venv)
    proc = c.run("python", "-m", "pip", "install", "--disable-pip-version-check", "-q",
                 str(src), cwd=base)
    assert proc.returncode == 0, f"pip install . failed:\n{proc.stdout}{proc.stderr}"
    yield c


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, {"Home.md": "# Home\n\nSee [[Other]].\n", "Other.md": "# Other\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


def test_the_core_install_has_no_search_stack(core: Core, tmp_path: Path) -> None:
    proc = core.run("python", "-m", "pip", "list", "--format=json",
                    "--disable-pip-version-check", cwd=tmp_path)
    names = {d["name"].lower().replace("_", "-") for d in json.loads(proc.stdout)}
    assert "kbase-ci" in names
    assert not names & _SEARCH_STACK, sorted(names & _SEARCH_STACK)


def test_the_hook_works_in_the_core_install(core: Core, vault: Path) -> None:
    write(vault, {"Home.md": "# Home\n\nSee [[Other]] and [[Nowhere]].\n"})
    git(vault, "add", "Home.md")
    proc = core.run("kbase", "check", "--staged", cwd=vault)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Home.md:3:" in proc.stdout and "KB101" in proc.stdout, proc.stdout
    write(vault, {"Home.md": "# Home\n\nSee [[Other]].\n"})
    git(vault, "add", "Home.md")
    proc = core.run("kbase", "check", "--staged", cwd=vault)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_command_beyond_the_core_exits_2_with_the_pip_line(core: Core,
                                                                vault: Path) -> None:
    wanted = {**COMMAND_EXTRAS, **dict.fromkeys(QUERIES, QUERY_EXTRA)}
    assert set(wanted) < set(commands())
    for word, extra in wanted.items():
        proc = core.run("kbase", word, *_ARGS.get(word, []), cwd=vault)
        assert proc.returncode == 2, (word, proc.stdout, proc.stderr)
        assert proc.stderr.strip().endswith(pip_line(extra)), (word, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        # Its help works all the same: the parsers import none of the extra.
        assert core.run("kbase", word, "--help", cwd=vault).returncode == 0, word


def test_every_entry_module_raises_the_guard(core: Core, tmp_path: Path) -> None:
    assert {extra for _, extra in _ENTRY_MODULES} | {"transformer"} == set(EXTRAS)
    for module, extra in _ENTRY_MODULES:
        proc = core.run("python", "-c", f"import {module}", cwd=tmp_path)
        assert proc.returncode == 1, (module, proc.stderr)
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith("kbase_ci.extras.MissingExtra: "), (module, last)
        assert last.endswith(pip_line(extra)), (module, last)
    proc = core.run("python", "-c", "from kbase_ci.extras import require; "
                    "require('transformer', 'an ONNX model')", cwd=tmp_path)
    assert proc.stderr.strip().endswith(pip_line("transformer")), proc.stderr
