"""House rules enforced by the suite: no pickle, light imports. (ruff, mypy and
`lint-imports` run beside the suite, in `.ci/run`.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def test_no_pickle_anywhere() -> None:
    for path in [*REPO.glob("kbase_ci/**/*.py"), *REPO.glob("bench/**/*.py")]:
        text = path.read_text(encoding="utf-8")
        # Spelled in pieces so this test is not itself a hit for the same search.
        assert "pickle" + ".load" not in text and "import " + "pickle" not in text, path


def test_check_path_imports_no_heavy_dependencies() -> None:
    # `kbase check` runs on every commit: numpy, usearch, tokenizers, bm25s must stay lazy.
    code = ("import sys, kbase_ci.cli.commandline as c, kbase_ci.checks.checker, "
            "kbase_ci.checks.checkregistry;"
            "c.build_parser('check');"
            "heavy = [m for m in ('numpy', 'usearch', 'tokenizers', 'bm25s', 'Stemmer', "
            "'tree_sitter', 'rich') if m in sys.modules];"
            "print(','.join(heavy))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, check=True)
    assert proc.stdout.strip() == "", f"heavy modules on the check path: {proc.stdout}"


def test_hook_exit_without_notes_imports_neither_config_nor_checks(tmp_path: Path) -> None:
    # A commit without Markdown must cost one `git diff` and little Python: the config,
    # vault and check code are imported only once a staged note is known.
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "code.py").write_text("x = 1\n", encoding="utf-8")
    subprocess.run(["git", "add", "code.py"], cwd=tmp_path, check=True)
    code = ("import sys, kbase_ci.cli.main as c; rc = c.main(['check', '--staged']);"
            "loaded = [m for m in ('kbase_ci.vault.config', 'kbase_ci.vault.notefiles', "
            "'kbase_ci.checks.checker', 'kbase_ci.checks.checkregistry', 'kbase_ci.parse.parser', "
            "'tree_sitter') if m in sys.modules];"
            "print(rc, ','.join(loaded))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, check=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout.strip() == "0", proc.stdout + proc.stderr


def test_grammar_loads_without_the_package_init_and_falls_back() -> None:
    # The compiled grammar alone (see kbase_ci/parse/grammar.py); parsing works the same when
    # that way fails and the package is imported as usual.
    direct = ("import sys, kbase_ci.parse.grammar as g, kbase_ci.parse.parser as p;"
              "assert p.parse_note('a.md', b'# A\\n[[B]]\\n').links[0].target == 'B';"
              "print('importlib.resources' in sys.modules, 'tree_sitter_markdown' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", direct], cwd=REPO, capture_output=True,
                          text=True, check=True)
    assert proc.stdout.split() == ["False", "False"], proc.stdout + proc.stderr
    fallback = ("import importlib.machinery as m; m.EXTENSION_SUFFIXES[:] = ['.none'];"
                "import sys, kbase_ci.parse.parser as p;"
                "assert p.parse_note('a.md', b'# A\\n[[B]]\\n').links[0].target == 'B';"
                "print('tree_sitter_markdown' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", fallback], cwd=REPO, capture_output=True,
                          text=True, check=True)
    assert proc.stdout.split() == ["True"], proc.stdout + proc.stderr
