"""What a query from an up-to-date index imports (issue 32): its CPU is mostly Python
start-up and imports, so modules it does not use stay unloaded. Each query runs in a
fresh `python -c` that calls the CLI entry (`cli.main.main`) in a clone with a published
index, after a first run that unpacked and validated it, and then lists `sys.modules`.
The parser, the YAML library, the resolver, the table checks, the diff code and the
terminal escaping load only where they are used (a note changed since the index, a
`.kbase.yml`, a name to resolve, an index not validated here before, `--staged`, text
on a terminal); a link query loads no search code either."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GIT_ENV, REPO, git, indexed_repo, run_kbase, write
from querykit import clone, publish_index

FILES = {
    "Hub.md": "# Hub\n\nSee [[Alpha]] and [[Beta]].\n\n## Plans\n\nMore soon.\n",
    "Alpha.md": "---\ntags: [garden]\n---\n# Alpha\n\nAlpha talks about compost. [[Hub#Plans]]\n",
    "Beta.md": "# Beta\n\nBeta grows tomato seedlings. Links [[Alpha]] and [x](https://x.org).\n",
}

NEVER = ("tree_sitter", "tree_sitter_markdown", "ruamel", "rich", "re2", "onnxruntime",
         "tokenizers", "usearch", "logging", "shutil", "sqlite3",
         "kbase_ci.parsed", "kbase_ci.parse.parser", "kbase_ci.vault.scanner",
         "kbase_ci.vault.cache", "kbase_ci.vault.resolver", "kbase_ci.index.validation",
         "kbase_ci.index.chunks", "kbase_ci.index.modelchoice", "kbase_ci.index.modelfolder",
         "kbase_ci.git.diff", "kbase_ci.report.escape", "kbase_ci.report.terminal")
"""Loaded by no query below (`sqlite3`: the state store; an index unpacked from its
branch was validated then, and no `.kbase.yml` needs its memo)."""
LINKS_NEVER = ("numpy", "bm25s", "Stemmer", "kbase_ci.query.search",
               "kbase_ci.query.evidence", "kbase_ci.query.verdict", "kbase_ci.index.bm25",
               "kbase_ci.index.shards", "kbase_ci.scope.select")
"""Loaded by no link query (backlinks, links): search code."""

_PROBE = """
import contextlib, io, json, sys
from kbase_ci.cli.main import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "answer": out.getvalue(), "modules": sorted(sys.modules)}))
"""


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("imports")
    src = indexed_repo(base / "src", FILES)
    publish_index(src)
    repo = clone(src, base / "clone")
    first = run_kbase("backlinks", "Alpha", cwd=repo)  # unpacks and validates the branch
    assert first.returncode == 0, first.stderr
    return repo


def _loaded(repo: Path, *args: str) -> tuple[str, set[str]]:
    """(the answer printed, the modules loaded) of one query in a new Python."""
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(REPO), "KBASE_OFFLINE": "1"}
    env.pop("KBASE_LOG", None)
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["code"] == 0, (got["answer"], proc.stderr)
    return got["answer"], set(got["modules"])


def _roots(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The names loaded themselves or through a submodule (`ruamel` by `ruamel.yaml`)."""
    return sorted(n for n in names if n in modules or any(m.startswith(f"{n}.")
                                                            for m in modules))


@pytest.mark.parametrize("args", [("backlinks", "Alpha"), ("links", "Alpha"),
                                  ("backlinks", "Hub", "--concise")])
def test_a_link_query_loads_no_parser_yaml_or_search_code(fresh: Path,
                                                         args: tuple[str, ...]) -> None:
    text, modules = _loaded(fresh, *args, "--format", "json")
    assert json.loads(text)["index"]["stale_notes"] == []  # answered from the index, nothing parsed
    assert "kbase_ci.query.view" in modules  # the probe saw the query run
    assert _roots(modules, NEVER + LINKS_NEVER) == []


def test_a_bm25_search_loads_no_parser_yaml_or_model_code(fresh: Path) -> None:
    text, modules = _loaded(fresh, "search", "compost", "--mode", "bm25", "--format", "json")
    assert [r["path"] for r in json.loads(text)["results"]][:1] == ["Alpha.md"]
    assert "kbase_ci.query.search" in modules
    # The note-level list runs in plain Python: numpy costs more than the query.
    assert _roots(modules, (*NEVER, "numpy")) == []


def test_the_lazy_parts_load_when_used(fresh: Path) -> None:
    """A changed note is parsed, a `.kbase.yml` read with ruamel, a text answer escaped:
    the forbidden modules above are lazy, not gone."""
    write(fresh, {"Beta.md": "# Beta\n\nNow about [[Hub]] only.\n",
                  ".kbase.yml": "query:\n  max_tokens: 4000\n"})
    try:
        text, modules = _loaded(fresh, "backlinks", "Hub", "--format", "json")
        assert json.loads(text)["index"]["stale_notes"] == ["Beta.md"]
        assert {"kbase_ci.parsed", "kbase_ci.vault.scanner", "ruamel.yaml", "sqlite3"} <= modules
        text, modules = _loaded(fresh, "backlinks", "Hub", "--format", "text")
        assert "Beta.md" in text and "kbase_ci.report.escape" in modules
    finally:
        git(fresh, "checkout", "-q", "--", "Beta.md")
        (fresh / ".kbase.yml").unlink()
