"""Every query command of the registry keeps to the default budget (8,000 tokens) on a
vault whose answers would pass it, and a small budget still answers with at least one
item of each list, `truncated` saying per list what was kept of how many; the lists the
registry names for an answer (`Query.lists`, the primary one first) give way last, in
that order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kbase_ci.query import registry
from kbase_ci.query.answerlists import list_name, list_sizes, lists_of
from kbase_ci.query.payload import ENVELOPE, cost
from tests.conftest import run_kbase
from tests.querykit import indexed_repo

N = 400
NAME = "folder-{k}/a rather long note title number {i:04d} about compost and tomatoes"


def _note(i: int) -> str:
    a, b = (i * 7 + 1) % N, (i * 13 + 5) % N
    return (f"---\ntags: [garden/t{i % 40}, topic{i % 60}]\n---\n# Note {i}\n\n"
            f"Compost heaps and tomato seedlings {i}: see [[Hub]], [[{_name(a)}]] and "
            f"[[{_name(b)}]], and the missing [[Unwritten {i % 90}]] note.\n\n"
            f"## Details\n\nMore about compost number {i} and https://example.org/{i}, "
            f"drawn in ![[sketch {i % 30}.png]].\n")


def _name(i: int) -> str:
    return NAME.format(k=i % 9, i=i)


# The arguments each command is asked with: one row per command of the registry (a new
# command fails `test_every_command_is_asked` until it has one).
ASK: dict[str, list[list[str]]] = {
    "search": [["search", "compost tomato seedlings", "--limit", "100", "--snippets"]],
    "read": [["read", "Hub", "--expand-links", "--depth", "2"]],
    "links": [["links", "Hub"], ["links", "--unlinked", "Hub"]],
    "backlinks": [["backlinks", "Hub"]],
    "explore": [["explore", "Hub"]],
    "context": [["context", "Hub", "--depth", "deep"], ["context", "--query", "compost"]],
    "graph": [["graph", action] for action in ("hubs", "clusters", "orphans")]
    + [["graph", "explore", "Hub"], ["graph", "neighborhood", "Hub", "--depth", "3"],
       ["graph", "explore", "Hub", "--summary"],
       ["graph", "path", _name(3), _name(250), "--all"]],
    "gaps": [["gaps", "--limit", "1000", "--min-notes", "1"],
             ["gaps", "--kind", "concept", "--kind", "attachment", "--min-notes", "1"]],
    "prerequisites": [["prerequisites", "Hub", "--limit", "1000"]],
    "reading-order": [["reading-order", "--limit", "1000"]],
    "notes": [["notes"]],
    "tags": [["tags", "--stats", "--limit", "0"]],
    "tags suggest": [["tags", "suggest", "Hub", "--limit", "100"]],
    "concepts": [["concepts", "--limit", "1000", "--min-notes", "1"]],
    "concept": [["concept", "compost"]],
    "summarize": [["summarize", "Hub"], ["summarize", "Hub", "--extract", "facts"]],
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
    files = {f"{_name(i)}.md": _note(i) for i in range(N)}
    files["Hub.md"] = "# Hub\n\n" + "".join(f"- [[{_name(i)}]] explains compost {i}\n"
                                           for i in range(N))
    files["handovers/2026-01-02.md"] = (
        "---\ntype: handover\ntrack: \"1\"\ndate: 2026-01-02\n---\n# Handover\n\n"
        "## Status\nPartial.\n\n## Next Steps\n"
        + "".join(f"- Turn compost heap {i} and water the tomato seedlings of bed {i}.\n"
                  for i in range(600))
        + "\n## Blockers\n" + "".join(f"- Heap {i} is too wet to turn.\n" for i in range(40)))
    return indexed_repo(root, files)


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


@pytest.mark.parametrize("command", sorted(ASK))
def test_no_text_form_floods_an_agent(vault: Path, command: str) -> None:
    """The text forms keep to the default budget too (issue 39: `handover latest`, whose
    default form is text, had none)."""
    for argv in ASK[command]:
        proc = run_kbase(*argv, "--format", "text", cwd=vault)
        assert proc.returncode in (0, 1), (argv, proc.stderr[-600:])
        assert cost(proc.stdout) <= 8000, argv
    if command == "handover latest":
        whole = run_kbase(*ASK[command][0], "--max-tokens", "0", cwd=vault).stdout
        assert cost(whole) > 8000 and "(truncated to --max-tokens 8000" in proc.stdout


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


def _marks(root: Path, argv: list[str]) -> tuple[frozenset[str], tuple[str, ...]]:
    """What the registry says of the answer `argv` gets: the keys never cut, and its
    lists that give way last (the primary one first), from the parsed call."""
    from kbase_ci.cli.commandline import build_parser
    from kbase_ci.cli.queryrun import CliSession
    from kbase_ci.query.spec import fields_of

    args = build_parser(argv[0]).parse_args(["--root", str(root), *argv])
    query = next(q for q in registry.declared(args.command) if q.name == args.query_tool)
    params = query.call({f.name: getattr(args, f.name) for f in fields_of(query.params)
                         if hasattr(args, f.name)})
    keep, named = query.marks(params, query.run(CliSession(args, query), params))
    return keep | ENVELOPE, named


def _spared(name: str, named: tuple[str, ...]) -> bool:
    """`name` is one of `named`, or holds one of them."""
    return any(n == name or n.startswith(name + ".") for n in named)


@pytest.mark.parametrize("command", sorted(ASK))
def test_a_small_budget_cuts_the_primary_list_last(vault: Path, command: str) -> None:
    """At 1,000 tokens every answer keeps an entry of its primary list (the first list
    the registry names that it has), and a named list loses items only once every list
    named after it, and every list not named, is down to one item: the primary last."""
    for argv in ASK[command]:
        keep, named = _marks(vault, argv)
        _, whole = _json(vault, [*argv, "--max-tokens", "0"])
        _, cut = _json(vault, [*argv, "--max-tokens", "1000"])
        sizes = list_sizes(whole, keep)
        present = [n for n in named if sizes.get(n)]
        if not present:  # an answer without any of its lists here (a plain `read`)
            continue
        assert list_sizes(cut, keep).get(present[0], 0) >= 1, (argv, cut.get("truncated"))
        lists = cut["truncated"]["lists"] if isinstance(cut.get("truncated"), dict) else {}
        for i, name in enumerate(named):
            kept_total = lists.get(name)
            if kept_total is None or not kept_total.partition("/")[0] < \
                    kept_total.partition("/")[2]:
                continue
            # `name` lost items: whatever gives way before it is down to one item each
            before = [(list_name(path), lst) for path, lst in lists_of(cut, keep)
                      if not _spared(list_name(path), named[:i + 1])]
            assert all(len(lst) <= 1 for _, lst in before), \
                (argv, name, [(n, len(lst)) for n, lst in before if len(lst) > 1])


def test_clusters_keep_their_members_before_the_nodes(vault: Path) -> None:
    """At the default budget a cluster answer gives its `nodes` (each member again, with
    its title) and `edges` up first: every cluster stays with its most central members
    first (issue 39: it kept one member per cluster and hundreds of nodes)."""
    _, whole = _json(vault, ["graph", "clusters", "--max-tokens", "0"])
    _, cut = _json(vault, ["graph", "clusters"])
    assert len(cut["clusters"]) == len(whole["clusters"]) > 1  # type: ignore[arg-type]
    members = sum(len(c["members"]) for c in cut["clusters"])  # type: ignore[attr-defined]
    assert members >= 0.5 * sum(len(c["members"]) for c in whole["clusters"])  # type: ignore[attr-defined]
    assert len(cut["nodes"]) == 1 and len(cut["edges"]) == 1  # type: ignore[arg-type]
    for c in cut["clusters"]:  # type: ignore[attr-defined]
        assert c["members"][0] == c["central"], c


def test_gaps_keep_the_notes_to_write_before_attachments(vault: Path) -> None:
    """At the default budget `gaps` keeps every note worth writing (its primary list)
    and gives the missing attachments up first (issue 39: it kept 3 of 20 notes)."""
    _, whole = _json(vault, ["gaps"])
    assert whole["unwritten"] and whole["attachments"], whole.get("truncated")
    _, full = _json(vault, ["gaps", "--max-tokens", "0"])
    assert len(whole["unwritten"]) == len(full["unwritten"]) == 20  # type: ignore[arg-type]
    lists = whole["truncated"]["lists"]  # type: ignore[index]
    assert lists["attachments"] == "1/20" and "unwritten" not in lists, lists
