"""No leakage: on a scoped index every query command answers from the scope's notes
only -- not a path, title or word of a note outside it -- while the same queries on the
main index do show those notes. Also: the work-tree overlay stays inside the scope, and
a scope whose main index moved is refused (status says why)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import pytest
from conftest import git, write
from scopekit import MARKERS, SCOPES, answer, forbidden, kbase, scope_repo, title

from kbase_ci.cli import commandline
from kbase_ci.cli import main as cli

Argvs = Callable[[set[str]], list[list[str]]]
ALL = sorted(MARKERS)


def _per_note(*head: str) -> Argvs:
    return lambda inside: [[*head, title(p)] for p in ALL]


# Every query command, with arguments that reach every note (outside ones too).
QUERIES: dict[str, Argvs] = {
    "search": lambda inside: [["search", m, "--mode", "bm25", "--snippets"]
                              for m in MARKERS.values()]
    + [["search", "tasks futures terms documents segments threads", "--snippets",
        "--limit", "20"]],
    "read": lambda inside: [["read", title(p)] for p in ALL]
    + [["read", title(p), "--expand-links", "--depth", "3"] for p in sorted(inside)],
    "links": _per_note("links"),
    "backlinks": _per_note("backlinks"),
    "explore": _per_note("explore"),
    "status": lambda inside: [["status"]],
    "context": lambda inside: [["context", title(p), "--depth", "deep"] for p in ALL]
    + [["context", "--query", "tasks futures terms segments"]],
    "graph": lambda inside: [["graph", "hubs", "--min-links", "0"], ["graph", "orphans"],
                             ["graph", "clusters", "--min-size", "1"]]
    + [["graph", "neighborhood", title(p), "--depth", "3"] for p in ALL]
    + [["graph", "explore", title(p), "--depth", "3"] for p in ALL]
    + [["graph", "explore", title(p), "--summary"] for p in sorted(inside)],
    "prerequisites": _per_note("prerequisites"),
    "reading-order": lambda inside: [["reading-order"], ["reading-order", "--tag", "python"]]
    + [["reading-order", "--from", title(p), "--depth", "3"] for p in ALL],
    "gaps": lambda inside: [["gaps", "--min-notes", "1"]],
    "notes": lambda inside: [["notes"], ["notes", "--tag", "python"],
                             ["notes", "--tag", "search"]],
    "tags": lambda inside: [["tags"], ["tags", "--tree", "--stats"]]
    + [["tags", "suggest", title(p)] for p in sorted(inside)],
    "concepts": lambda inside: [["concepts"]],
    "concept": lambda inside: [["concept", MARKERS[p], how] for p in ALL
                               for how in ("--definition", "--notes")],
    "summarize": lambda inside: [["summarize", title(p)] for p in ALL]
    + [["summarize", title(p), "--extract", "facts"] for p in ALL],
    "compare": lambda inside: [["compare", title(a), title(b)] for a, b in pairwise(ALL)]
    + [["compare", title(a), title(b), "--concept", MARKERS[b]]
       for a, b in pairwise(ALL)],
    "auto-index": lambda inside: [["auto-index", "--tag", "python"],
                                  ["auto-index", "--tag", "search"]],
}


def query_commands() -> list[str]:
    """The commands in `commandline.COMMANDS` that take --scope (every query command)."""
    out = []
    for name in commandline.COMMANDS:
        parser = commandline.build_parser(name)
        with contextlib.redirect_stdout(io.StringIO()) as buf, \
                contextlib.suppress(SystemExit):
            parser.parse_args([name, "--help"])
        if "--scope" in buf.getvalue() or name == "graph":
            out.append(name)
    return [n for n in out if n not in ("mcp", "scope")]  # MCP: tests/flows/test_mcp.py


def run(repo: Path, argv: list[str]) -> tuple[int, str]:
    """The real CLI in this process (hundreds of queries; a process each is slow)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["--root", str(repo), *argv])
    return code, out.getvalue() + err.getvalue()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("scope-leak")
    root = scope_repo(base / "vault", base / "model")
    for name in SCOPES:
        kbase(root, "scope", "build", name)
    return root


def test_every_query_command_is_covered() -> None:
    missing = set(query_commands()) - set(QUERIES)
    assert not missing, f"add these commands to QUERIES: {sorted(missing)}"


@pytest.mark.parametrize("command", sorted(QUERIES))
@pytest.mark.parametrize("scope", sorted(SCOPES))
def test_no_leak(repo: Path, scope: str, command: str) -> None:
    if command not in commandline.COMMANDS:
        pytest.skip(f"`kbase {command}` does not exist")
    inside = SCOPES[scope]
    bad = forbidden(repo, inside)
    assert bad, "the scope must leave something out"
    seen_inside = False
    for argv in QUERIES[command](inside):
        code, out = run(repo, [*argv, "--scope", scope])
        assert code in (0, 1, 2), (argv, out)
        echoed = out
        for arg in argv:  # the question itself ("no note named Home") is not a leak
            echoed = echoed.replace(arg, "")
        leaks = [b for b in bad if b in echoed]
        assert not leaks, f"{argv} on scope {scope} shows {leaks}:\n{out}"
        seen_inside |= any(MARKERS[p] in out or p in out for p in inside)
    # Answers that need no marker word (a tag, a concept, a pair of notes) may say nothing
    # of a small scope: what they must not do is show a note outside it (above).
    assert seen_inside or command in ("gaps", "status", "tags", "notes", "graph",
                                      "prerequisites", "concepts", "compare", "auto-index")


@pytest.mark.parametrize("command", ["search", "read", "explore", "context", "graph",
                                     "notes", "backlinks"])
def test_the_main_index_shows_what_scopes_hide(repo: Path, command: str) -> None:
    seen = ""
    for argv in QUERIES[command](set(MARKERS)):
        seen += run(repo, argv)[1]
    outside_every_scope = {"python/Asyncio.md", "lucene/drafts/Scoring Draft.md",
                           "Home.md"}
    assert all(p in seen or MARKERS[p] in seen for p in outside_every_scope), seen[:2000]


def test_out_of_scope_links_and_read_answers(repo: Path) -> None:
    links = answer(repo, "links", "Ownership", "--scope", "rust")
    away = [lk for lk in links["links"] if lk["status"] == "out_of_scope"]
    assert len(away) == 2 and all(lk["path"] is None for lk in away)
    code, out = run(repo, ["read", "Python GIL", "--scope", "rust"])
    assert code == 2 and "no note named Python GIL" in out
    code, out = run(repo, ["read", "python/Python GIL.md", "--scope", "rust"])
    assert code == 2
    got = answer(repo, "search", "narwhalgil", "--scope", "rust", ok=(1,))
    assert got["results"] == [] and got["index"]["scope"]["name"] == "rust"


def test_overlay_stays_inside_the_scope(repo: Path, tmp_path: Path) -> None:
    work = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(work))
    # The clone has no .kbase/: copy the built main index and its scopes.
    import shutil

    shutil.copytree(repo / ".kbase", work / ".kbase")
    write(work, {
        "python/Leak.md": "# Leak\n\nsecretleak tasks futures #python/async #rust/memory "
                          "[[Ownership]]\n",
        "rust/Fresh.md": "# Fresh Rust\n\nfreshrust tasks [[Ownership]] [[Asyncio]]\n",
        "rust/Borrowing.md": "# Borrowing\n\nNow about Python only. #python/runtime\n"
                             "movedword [[Ownership]]\n",
    })
    git(work, "add", "-A")

    def found(*scope: str) -> set[str]:
        """Notes found for any of the three words (each note holds one of them)."""
        return {r["path"] for word in ("secretleak", "freshrust", "movedword")
                for r in answer(work, "search", word, "--mode", "bm25", *scope,
                                ok=(0, 1))["results"]}

    assert found("--scope", "rust") == {"rust/Fresh.md", "rust/Borrowing.md"}  # the folder
    # rust-tags: Leak carries #rust/memory (in), Borrowing lost its rust tag (out).
    assert found("--scope", "rust-tags") == {"python/Leak.md"}
    status = answer(work, "status", "--scope", "rust-tags")
    assert "rust/Borrowing.md" in status["freshness"]["deleted"]
    assert "rust/Fresh.md" not in json.dumps(status)
    back = answer(work, "backlinks", "Ownership", "--scope", "rust")
    assert "python/Leak.md" not in json.dumps(back)
    assert found() == {"python/Leak.md", "rust/Fresh.md", "rust/Borrowing.md"}


def test_stale_scope_is_refused_and_reported(repo: Path, tmp_path: Path) -> None:
    import shutil

    work = tmp_path / "stale"
    shutil.copytree(repo, work)
    write(work, {"rust/New.md": "# New\n\nnewword [[Ownership]]\n"})
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "more")
    kbase(work, "index", "--no-scopes")  # the main index moves, its scopes stay behind
    _, out = kbase(work, "search", "tasks", "--scope", "rust", ok=(2,))
    assert "scope rust was built from another index; rebuild with " \
           "`kbase scope build rust`" in out
    st = answer(work, "status", "--scope", "rust")
    assert st["index"]["scope"]["stale"] is True
    _, text = kbase(work, "status", "--scope", "rust", "--format", "text")
    assert "stale: scope rust was built from another index" in text
    listed = {s["name"]: s["stale"] for s in answer(work, "status")["scopes"]}
    assert listed == {name: True for name in SCOPES}
    kbase(work, "scope", "build", "rust")
    got = answer(work, "search", "newword", "--scope", "rust", "--mode", "bm25")
    assert [r["path"] for r in got["results"]] == ["rust/New.md"]
    assert got["index"]["scope"]["stale"] is False


@pytest.mark.parametrize("scope", ["rust", "search"])
def test_mcp_server_on_a_scope_leaks_nothing(repo: Path, scope: str) -> None:
    """`kbase mcp --scope NAME` through the SDK's stdio client: every tool, every note."""
    import os
    import sys

    import anyio
    from conftest import GIT_ENV, REPO
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.types import TextContent

    inside = SCOPES[scope]
    bad = forbidden(repo, inside)
    calls: list[tuple[str, dict[str, object]]] = [
        ("search", {"query": m, "mode": "bm25", "snippets": True}) for m in MARKERS.values()]
    calls += [("search", {"query": "tasks futures terms segments", "limit": 20})]
    for p in ALL:
        calls += [("read", {"note": title(p)}), ("links", {"action": "explore", "note": title(p)}),
                  ("context", {"note": title(p), "depth": "deep"})]
    calls += [("gaps", {"min_notes": 1}), ("context", {"query": "tasks terms segments"})]
    for p in sorted(inside):
        calls += [("links", {"action": "links", "note": title(p)}), ("links",
                   {"action": "backlinks", "note": title(p)}),
                  ("graph", {"action": "explore", "note": title(p), "depth": 3}),
                  ("reading_order", {"action": "prerequisites", "note": title(p)}),
                  ("reading_order", {"action": "order", "start": title(p), "depth": 3}),
                  ("tags", {"action": "suggest", "note": title(p)})]
    calls += [("graph", {"action": "hubs", "min_links": 0}), ("tags", {"action": "notes"}),
               ("tags", {"action": "list"}),
              ("status", {})]
    texts: list[str] = []

    async def main() -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
        params = StdioServerParameters(command=sys.executable, cwd=repo, env=env,
                                       args=["-m", "kbase_ci", "mcp", "--scope", scope])
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                for tool, arguments in calls:
                    result = await session.call_tool(tool, arguments)
                    block = result.content[0]
                    assert isinstance(block, TextContent)
                    echoed = block.text
                    for value in arguments.values():
                        echoed = echoed.replace(str(value), "")
                    texts.append(echoed)

    anyio.run(main)
    assert len(texts) == len(calls)
    leaks = sorted({b for t in texts for b in bad if b in t})
    assert not leaks, leaks
    assert any(MARKERS[p] in t for t in texts for p in inside)
