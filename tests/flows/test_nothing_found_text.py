"""Every query answer that found nothing (exit 1) says so in its text form: the text of
an empty answer is never empty (issue 39: `links`, `backlinks`, `graph hubs`, `graph
clusters`, `tags`, `tags suggest` and `handover latest` printed nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbase_ci.query import registry
from tests.conftest import run_kbase
from tests.querykit import indexed_repo

NOTES = {"Alone.md": "# Alone\n\nNothing links here, plain words only.\n",
         "Other.md": "# Other\n\nSome other words.\n"}
NOTHING: dict[str, list[list[str]]] = {
    "search": [["search", "zebraxylophone"]],
    "links": [["links", "Alone"], ["links", "--unlinked", "Alone"]],
    "backlinks": [["backlinks", "Alone"]],
    "context": [["context", "--query", "zebraxylophone"]],
    "graph": [["graph", "path", "Alone", "Other"], ["graph", "hubs"], ["graph", "clusters"],
              ["graph", "neighborhood", "Alone"], ["graph", "explore", "Alone"]],
    "gaps": [["gaps"]],
    "prerequisites": [["prerequisites", "Alone"]],
    "tags": [["tags"]],
    "tags suggest": [["tags", "suggest", "Alone"]],
    "concepts": [["concepts"]],
    "concept": [["concept", "zebra"]],
    "compare": [["compare", "Alone", "Other"]],
    "handover latest": [["handover", "latest"]],
}
"""A call that finds nothing in this vault, for each command that can find nothing."""


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return indexed_repo(tmp_path_factory.mktemp("nothing"), NOTES)


def test_the_commands_asked_exist() -> None:
    assert set(NOTHING) <= {q.words for q in registry.every()}


@pytest.mark.parametrize("command", sorted(NOTHING))
def test_nothing_found_is_said_in_text(vault: Path, command: str) -> None:
    for argv in NOTHING[command]:
        proc = run_kbase(*argv, "--format", "text", cwd=vault)
        assert proc.returncode == 1, (argv, proc.stdout, proc.stderr)
        assert proc.stdout.strip(), (argv, proc.stderr)
