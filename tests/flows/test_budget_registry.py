"""Every query command of the registry keeps to the default budget (8,000 tokens) on a
vault whose answers would pass it, and a small budget still answers with at least one
item of each list, `truncated` saying per list what was kept of how many."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kbase_ci.query.payload import cost
from kbase_ci.query.tools import registry
from tests.conftest import git, run_kbase, write

N = 400
NAME = "folder-{k}/a rather long note title number {i:04d} about compost and tomatoes"


def _note(i: int) -> str:
    a, b = (i * 7 + 1) % N, (i * 13 + 5) % N
    return (f"---\ntags: [garden/t{i % 40}, topic{i % 60}]\n---\n# Note {i}\n\n"
            f"Compost heaps and tomato seedlings {i}: see [[Hub]], [[{_name(a)}]] and "
            f"[[{_name(b)}]], and the missing [[Unwritten {i % 90}]] note.\n\n"
            f"## Details\n\nMore about compost number {i} and https://example.org/{i}.\n")


def _name(i: int) -> str:
    return NAME.format(k=i % 9, i=i)


# The arguments each command is asked with: one row per command of the registry (a new
# command fails `test_every_command_is_asked` until it has one).
ASK: dict[str, list[list[str]]] = {
    "search": [["search", "compost tomato seedlings", "--limit", "100", "--snippets"]],
    "read": [["read", "Hub", "--expand-links", "--depth", "2"]],
    "links": [["links", "Hub"]],
    "backlinks": [["backlinks", "Hub"]],
    "explore": [["explore", "Hub"]],
    "context": [["context", "Hub", "--depth", "deep"], ["context", "--query", "compost"]],
    "graph": [["graph", action] for action in ("hubs", "clusters", "orphans")]
    + [["graph", "explore", "Hub"], ["graph", "neighborhood", "Hub",
                                                "--depth", "3"]],
    "gaps": [["gaps", "--limit", "1000", "--min-notes", "1"]],
    "prerequisites": [["prerequisites", "Hub", "--limit", "1000"]],
    "reading-order": [["reading-order", "--limit", "1000"]],
    "notes": [["notes"]],
    "tags": [["tags", "--stats", "--limit", "0"]],
    "tags suggest": [["tags", "suggest", "Hub", "--limit", "100"]],
    "concepts": [["concepts", "--limit", "1000", "--min-notes", "1"]],
    "concept": [["concept", "compost"]],
    "summarize": [["summarize", "Hub"]],
    "compare": [["compare", "folder-1", "folder-2", "--concept", "compost"]],
    "auto-index": [["auto-index", "--domain", "folder-1"]],
    "status": [["status"]],
    "handover latest": [["handover", "latest"]],
}
BIG = ("notes", "backlinks", "read")
"""Commands whose whole answer on this vault is far over 8,000 tokens."""


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("budget-registry")
    git(root, "init", "-q", "-b", "main")
    files = {f"{_name(i)}.md": _note(i) for i in range(N)}
    files["Hub.md"] = "# Hub\n\n" + "".join(f"- [[{_name(i)}]] explains compost {i}\n"
                                           for i in range(N))
    write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "notes")
    assert run_kbase("index", cwd=root).returncode == 0
    return root


def test_every_command_is_asked() -> None:
    assert set(ASK) == {q.words for q in registry.every()}


def _json(root: Path, argv: list[str]) -> tuple[str, dict[str, object]]:
    proc = run_kbase(*argv, "--format", "json", cwd=root)
    assert proc.returncode in (0, 1), (argv, proc.stderr[-600:])
    out = proc.stdout.rstrip("\n")
    return out, json.loads(out)


@pytest.mark.parametrize("command", sorted(ASK))
def test_no_command_floods_an_agent(vault: Path, command: str) -> None:
    for argv in ASK[command]:
        out, _ = _json(vault, argv)
        assert cost(out) <= 8000, argv


@pytest.mark.parametrize("command", BIG)
def test_the_vault_would_flood_without_the_default(vault: Path, command: str) -> None:
    out, whole = _json(vault, [*ASK[command][0], "--max-tokens", "0"])
    assert cost(out) > 8000 and "truncated" not in whole
    _, cut = _json(vault, ASK[command][0])
    truncated = cut["truncated"]
    assert isinstance(truncated, dict) and truncated["max_tokens"] == 8000
    for name, kept_total in truncated["lists"].items():
        kept, total = map(int, kept_total.split("/"))
        assert 0 < kept < total or name == "index.stale_notes", (name, kept_total)


def test_small_budgets_keep_one_item_of_each_list(vault: Path) -> None:
    _, hits = _json(vault, ["search", "compost tomato", "--max-tokens", "400"])
    assert hits["results"], hits  # the envelope alone was over 400: exit 2
    assert hits["truncated"]["lists"]["results"].startswith("1/")  # type: ignore[index]
    _, around = _json(vault, ["explore", _name(3), "--max-tokens", "500"])
    assert around["outlinks"] and around["backlinks"], around  # outlinks were emptied
    lists = around["truncated"]["lists"]  # type: ignore[index]
    assert all(not c.startswith("0/") for c in lists.values()), lists
