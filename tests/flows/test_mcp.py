"""`kbase mcp`: the SDK's own stdio client starts the real server as a subprocess, lists
its tools, and checks every answer against the CLI's JSON for the same question."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import FIXTURES, GIT_ENV, REPO, git, run_kbase
from indexkit import make_tiny_model
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from kbase_ci.cli.commandline import _SHORT
from kbase_ci.mcp.schema import CEILING, tokens
from kbase_ci.query.fold import FOLDS, members, tools

QUERY_COMMANDS = _SHORT - {"check", "fix"}


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_model(tmp_path_factory.mktemp("model") / "tiny")


def _build_repo(dest: Path, model: Path) -> Path:
    shutil.copytree(FIXTURES / "demo-vault", dest)
    for extra in ("handovers", "questions"):
        shutil.copytree(FIXTURES / "mcp" / extra, dest / extra)
    (dest / ".gitignore").write_text(".kbase/\n", encoding="utf-8")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "demo")
    proc = run_kbase("index", "--model", str(model), cwd=dest)
    assert proc.returncode == 0, proc.stderr
    return dest


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, model: Path) -> Path:
    """Read-only for the tests that use it; tests that edit notes build their own."""
    return _build_repo(tmp_path_factory.mktemp("mcp") / "demo", model)


@asynccontextmanager
async def connect(repo: Path, *args: str) -> AsyncIterator[ClientSession]:
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "kbase_ci", "mcp", *args], cwd=repo, env=env)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session


def serve(repo: Path, body: Callable[[ClientSession], Awaitable[None]], *args: str) -> None:
    async def main() -> None:
        async with connect(repo, *args) as session:
            await body(session)

    anyio.run(main)


async def call(session: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    result = await session.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    return result


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def answer(session: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await call(session, tool, **arguments)
    assert not result.is_error, text_of(result)
    data: dict[str, Any] = json.loads(text_of(result))
    return data


def cli(repo: Path, *args: str) -> dict[str, Any]:
    proc = run_kbase(*args, cwd=repo)
    assert proc.returncode in (0, 1) and proc.stdout, (args, proc.stderr)
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_lists_every_tool_with_a_description_and_schema(demo: Path) -> None:
    async def body(session: ClientSession) -> None:
        listed = (await session.list_tools()).tools
        names = {t.name for t in listed}
        # One tool per query command of the CLI (`tags suggest` -> tags_suggest), or one
        # for several, whose `action` names the command (kbase_ci.query.fold)
        queries = {c.replace("-", "_") for c in QUERY_COMMANDS} | {"tags_suggest",
                                                                   "handover_latest"}
        folded = {q.name: f.name for f in FOLDS for q in members(f).values()}
        assert names == {folded.get(q, q) for q in queries} and len(names) == len(tools())
        for f in FOLDS:
            tool = next(t for t in listed if t.name == f.name)
            assert tool.input_schema["properties"]["action"]["enum"] == list(f.actions)
        for t in listed:  # the CLI's flags never appear; a tool says when to use it
            assert "--" not in (t.description or ""), t.name
        for t in listed:
            assert t.description and len(t.description) > 50, t.name
            assert t.annotations is not None and t.annotations.read_only_hint
        search = next(t for t in listed if t.name == "search")
        props = search.input_schema["properties"]
        assert search.input_schema["required"] == ["query"]
        assert props["limit"]["default"] == 5 and props["concise"]["type"] == "boolean"
        assert set(props["mode"]["enum"]) == {"hybrid", "bm25", "semantic"}
        # Every agent pays the list in its context: it stays within the ceiling
        # (docs/mcp.md has the figure per tool).
        assert tokens(listed) <= CEILING

    serve(demo, body)


def test_answers_equal_the_cli_json(demo: Path, model: Path) -> None:
    cases: list[tuple[str, dict[str, Any], list[str]]] = [
        ("search", {"query": "package manager", "mode": "bm25"},
         ["search", "package manager", "--mode", "bm25"]),
        ("search", {"query": "install", "mode": "bm25", "tags": ["howto"], "limit": 2,
                    "snippets": True},
         ["search", "install", "--mode", "bm25", "--tag", "howto", "--limit", "2",
          "--snippets"]),
        ("search", {"query": "links and tags"},
         ["search", "links and tags", "--model", str(model)]),
        ("search", {"query": "Wikilinks", "concise": True},
         ["search", "Wikilinks", "--concise", "--model", str(model)]),
        ("links", {"action": "explore", "note": "Home"}, ["explore", "Home"]),
        ("links", {"action": "explore", "note": "Concepts/Linking.md", "concise": True},
         ["explore", "Concepts/Linking.md", "--concise"]),
        ("read", {"note": "Getting Started", "section": "Linux"},
         ["read", "Getting Started#Linux"]),
        ("read", {"note": "Wikilinks"}, ["read", "Wikilinks"]),
        ("handover_latest", {}, ["handover", "latest", "--format", "json"]),
        ("handover_latest", {"track": "search"},
         ["handover", "latest", "--track", "search", "--format", "json"]),
    ]
    cases += [
        ("context", {"note": "Home", "max_tokens": 1500},
         ["context", "Home", "--max-tokens", "1500"]),
        ("context", {"query": "install", "depth": "1", "strategy": "importance"},
         ["context", "--query", "install", "--depth", "1", "--strategy", "importance"]),
        ("gaps", {"min_notes": 1}, ["gaps", "--min-notes", "1"]),
        ("gaps", {"kinds": ["note", "attachment"], "limit": 3},
         ["gaps", "--kind", "note", "--kind", "attachment", "--limit", "3"]),
        ("links", {"action": "links", "note": "Home"}, ["links", "Home"]),
        ("links", {"action": "backlinks", "note": "Home"}, ["backlinks", "Home"]),
        ("graph", {"action": "explore", "note": "Home"}, ["graph", "explore", "Home"]),
        ("graph", {"action": "explore", "note": "Home", "summary": True, "depth": 1},
         ["graph", "explore", "Home", "--summary", "--depth", "1"]),
        ("graph", {"action": "path", "source": "Home", "target": "Wikilinks"},
         ["graph", "path", "Home", "Wikilinks"]),
        ("graph", {"action": "neighborhood", "note": "Home", "depth": 2},
         ["graph", "neighborhood", "Home", "--depth", "2"]),
        ("graph", {"action": "hubs", "min_links": 1}, ["graph", "hubs", "--min-links", "1"]),
        ("graph", {"action": "clusters", "min_size": 2},
         ["graph", "clusters", "--min-size", "2"]),
        ("graph", {"action": "orphans", "no_backlinks": True},
         ["graph", "orphans", "--no-backlinks"]),
        ("tags", {"action": "notes", "tags": ["howto"]}, ["notes", "--tag", "howto"]),
        ("tags", {"action": "list", "tree": True}, ["tags", "--tree"]),
        ("tags", {"action": "suggest", "note": "Getting Started"},
         ["tags", "suggest", "Getting Started"]),
        ("status", {}, ["status", "--model", str(model)]),  # the server's --model
        ("reading_order", {"action": "prerequisites", "note": "Wikilinks"},
         ["prerequisites", "Wikilinks"]),
        ("reading_order", {"action": "order", "start": "Home", "depth": 1},
         ["reading-order", "--from", "Home", "--depth", "1"]),
        ("reading_order", {"action": "order", "tags": ["howto"]},
         ["reading-order", "--tag", "howto"]),
        # what the CLI offers the tools offer too
        ("reading_order", {"action": "order", "start": "Home", "tags": ["demo"]},
         ["reading-order", "--from", "Home", "--tag", "demo"]),
        ("links", {"action": "backlinks", "note": "Home", "concise": True},
         ["backlinks", "Home", "--concise"]),
        ("read", {"note": "Home", "expand_links": True, "depth": 2},
         ["read", "Home", "--expand-links", "--depth", "2"]),
        ("search", {"query": "install", "mode": "bm25", "explain": True},
         ["search", "install", "--mode", "bm25", "--explain"]),
    ]
    expected = [cli(demo, *c[2]) for c in cases]  # in-process: one at a time

    async def body(session: ClientSession) -> None:
        for (tool, arguments, argv), want in zip(cases, expected, strict=True):
            got = await answer(session, tool, **arguments)
            assert got == want, (tool, arguments, argv)

    serve(demo, body, "--model", str(model))
    hybrid = expected[2]
    assert hybrid["notices"] == [], "the tiny model must be in use for the hybrid case"
    assert expected[8]["handover"]["path"] == "handovers/2026-11-20-search-tuning.md"


def said(result: CallToolResult) -> dict[str, Any]:
    """A tool error: kbase's JSON error (`kind`, `message`, the `parameter` at fault)."""
    assert result.is_error, text_of(result)
    data: dict[str, Any] = json.loads(text_of(result))["error"]
    assert set(data) <= {"kind", "message", "parameter", "hint"}, data
    return data


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(demo: Path) -> None:
    async def body(session: ClientSession) -> None:
        bad = said(await call(session, "links", action="explore", note="Hme"))
        assert bad == {"kind": "usage", "message": "no note named Hme; did you mean Home?"}
        bad = said(await call(session, "read", note="Getting Started", section="Uninstall"))
        assert "no heading 'Uninstall'" in bad["message"]
        assert "Install" in bad["message"]  # names the headings there are
        # a search that does not answer is an answer, not a tool error: the CLI's JSON
        got = await call(session, "search", query="zebra xylophone", mode="bm25",
                         tags=["howto"])
        assert not got.is_error
        answered = json.loads(text_of(got))
        assert answered["verdict"]["answered"] is False
        assert answered["verdict"]["unknown_terms"] == ["zebra", "xylophone"]
        assert answered == cli(demo, "search", "zebra xylophone", "--mode", "bm25",
                               "--tag", "howto")
        assert {"notices", "index", "results", "verdict"} <= set(answered)
        bad = said(await call(session, "search", query="install", limit=0))
        assert bad["parameter"] == "limit" and "https://" not in bad["message"]
        bad = said(await call(session, "search", query="install", mode="fuzzy"))
        assert bad["parameter"] == "mode" and bad["message"].startswith("mode: input should")
        bad = said(await call(session, "handover_latest", track="nope"))
        assert bad["kind"] == "not-found" and bad["message"] == "no handover for track nope"
        assert bad["hint"].startswith("a handover is a note with")
        bad = said(await call(session, "read"))
        assert bad == {"kind": "usage", "message": "read needs note", "parameter": "note"}
        # the CLI's messages in the tools' words: parameters, not flags
        bad = said(await call(session, "context", note="Home", depth="weird"))
        assert bad["message"].startswith("depth must be quick, standard")
        bad = said(await call(session, "context", note="Home", query="install"))
        assert "--" not in bad["message"] and bad["parameter"] == "query"
        bad = said(await call(session, "graph", action="neighborhood", note="Home", depth=-1))
        assert bad["parameter"] == "depth"
        bad = said(await call(session, "graph", action="path", source="Home"))
        assert bad["message"].startswith("action path needs source and target")
        assert bad["parameter"] == "target"
        bad = said(await call(session, "graph", action="hubs", depth=2))
        assert bad["message"] == "action hubs takes no depth; it takes limit, min_links, " \
            "concise" and bad["parameter"] == "depth"
        # a fold checks a call as `graph` does, then as the action's own tool did
        bad = said(await call(session, "digest", action="summarize", note="Home", name="x"))
        assert bad["message"] == "action summarize takes no name; it takes note, extract"
        bad = said(await call(session, "digest", action="concept"))
        assert bad == {"kind": "usage", "message": "action concept needs name",
                       "parameter": "name"}
        bad = said(await call(session, "tags", action="suggest", note="Home", limit=101))
        assert bad["message"] == "limit must be at most 100 for action suggest, not 101"
        bad = said(await call(session, "reading_order", action="prerequisites", note="Home",
                              depth=0))
        assert bad["message"] == "depth must be at least 1, not 0"
        bad = said(await call(session, "tags", action="poems"))
        assert bad["parameter"] == "action"
        bad = said(await call(session, "gaps", kinds=["image"]))
        assert bad["parameter"] == "kinds"
        bad = said(await call(session, "search", query="install", mode="semantic"))
        assert "use --mode" not in bad["message"] and "use mode bm25" in bad["message"]
        assert "start the server with `kbase mcp --model PATH/TO/tiny`" in bad["message"]
        good = await answer(session, "read", note="Home")
        assert good["path"] == "Home.md"

    serve(demo, body)


def test_arguments_are_strict_and_name_what_the_tool_expects(demo: Path) -> None:
    """Issue 39: an argument a tool does not take is refused (the schema says
    `additionalProperties: false`), never silently dropped; a folded action given
    another action's parameter says which one it expects."""
    async def body(session: ClientSession) -> None:
        for tool in (await session.list_tools()).tools:
            assert tool.input_schema["additionalProperties"] is False, tool.name
        bad = said(await call(session, "search", query="install", lmit=3))
        assert bad == {"kind": "usage", "parameter": "lmit", "message":
                       "search takes no lmit; did you mean limit? (search takes query, mode, "
                       "domain, tags, limit, snippets, concise, explain, min_confidence, "
                       "max_tokens)"}
        bad = said(await call(session, "status", verbose=True))
        assert bad["parameter"] == "verbose" and "did you mean" not in bad["message"]
        bad = said(await call(session, "digest", action="concept", concept="Home"))
        assert bad["parameter"] == "concept"
        assert bad["message"].startswith("action concept takes no concept; it needs name,")
        bad = said(await call(session, "links", action="links", note=3))
        assert bad["parameter"] == "note" and "pydantic" not in bad["message"]
        good = await answer(session, "search", query="install", limit=3)
        assert good["results"]

    serve(demo, body)


def test_answers_follow_note_edits_between_calls(tmp_path: Path, model: Path) -> None:
    repo = _build_repo(tmp_path / "repo", model)
    linking = repo / "Concepts" / "Linking.md"

    async def body(session: ClientSession) -> None:
        first = await answer(session, "links", action="explore", note="Linking", concise=True)
        assert "Getting Started.md" not in first["outlinks"]
        assert first["index"]["stale_notes"] == []

        # Edited: a new link and a new word, not committed, no rebuild.
        linking.write_text(linking.read_text(encoding="utf-8")
                           + "\nSee [[Getting Started]] for the quokka setup.\n",
                           encoding="utf-8")
        edited = await answer(session, "links", action="explore", note="Linking", concise=True)
        assert "Getting Started.md" in edited["outlinks"]
        assert edited["index"]["stale_notes"] == ["Concepts/Linking.md"]
        hits = await answer(session, "search", query="quokka", mode="bm25")
        assert [r["path"] for r in hits["results"]] == ["Concepts/Linking.md"]
        assert edited == cli(repo, "explore", "Linking", "--concise")
        # Edited again (still the same set of modified files): the new text is seen.
        linking.write_text(linking.read_text(encoding="utf-8").replace("quokka", "numbat"),
                           encoding="utf-8")
        hits = await answer(session, "search", query="numbat", mode="bm25")
        assert [r["path"] for r in hits["results"]] == ["Concepts/Linking.md"]
        missed = await answer(session, "search", query="quokka", mode="bm25")
        assert missed["verdict"]["answered"] is False and missed["results"] == []
        assert missed["index"]["stale_notes"] == ["Concepts/Linking.md"]

        # Added (tracked, not committed) and then deleted.
        (repo / "Wombat.md").write_text("# Wombat\n\nLinks to [[Home]].\n", encoding="utf-8")
        git(repo, "add", "Wombat.md")
        added = await answer(session, "read", note="Wombat")
        assert added["path"] == "Wombat.md"
        back = await answer(session, "links", action="explore", note="Home")
        assert "Wombat.md" in [b["path"] for b in back["backlinks"]]
        (repo / "Wombat.md").unlink()
        gone = await call(session, "read", note="Wombat")
        assert said(gone)["message"].startswith("no note named Wombat")
        back = await answer(session, "links", action="explore", note="Home")
        assert "Wombat.md" not in [b["path"] for b in back["backlinks"]]

        # Committed and re-indexed: the server reopens the rebuilt index.
        git(repo, "rm", "-q", "--cached", "Wombat.md")
        git(repo, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qam", "edit")
        proc = run_kbase("index", "--model", str(model), cwd=repo)
        assert proc.returncode == 0, proc.stderr
        fresh = await answer(session, "links", action="explore", note="Linking", concise=True)
        head = git(repo, "rev-parse", "HEAD").strip()
        assert fresh["index"]["source_commit"] == head
        assert fresh["index"]["stale_notes"] == []
        assert "Getting Started.md" in fresh["outlinks"]

        # Many notes changed since the index: the budget cuts their list, not the answer.
        for i in range(150):
            (repo / f"Sprint log number {i:03d} with a long descriptive name.md").write_text(
                f"# Log {i}\n\nInstall notes, see [[Home]].\n", encoding="utf-8")
        for tool, arguments in (("status", {}), ("search", {"query": "install",
                                                            "mode": "bm25"})):
            got = await answer(session, tool, max_tokens=2000, **arguments)
            assert got["index"]["stale_count"] == 150, tool
            kept, total = got["truncated"]["lists"]["index.stale_notes"].split("/")
            assert int(kept) < int(total) == 150, tool

    serve(repo, body, "--model", str(model))


def test_a_broken_index_folder_fails_at_start_with_exit_2(demo: Path, tmp_path: Path) -> None:
    proc = run_kbase("mcp", "--index", str(tmp_path / "nowhere"), cwd=demo)
    assert proc.returncode == 2
    assert "nowhere" in proc.stderr and "Traceback" not in proc.stderr


def test_scope_answers_only_from_the_scope(demo: Path) -> None:
    proc = run_kbase("scope", "build", "concepts", "--path", "Concepts/*", cwd=demo)
    assert proc.returncode == 0, proc.stderr
    want = cli(demo, "search", "links", "--mode", "bm25", "--limit", "10",
               "--scope", "concepts")
    outside = cli(demo, "search", "links", "--mode", "bm25", "--limit", "10")
    assert any(not r["path"].startswith("Concepts/") for r in outside["results"])

    async def body(session: ClientSession) -> None:
        got = await answer(session, "search", query="links", mode="bm25", limit=10)
        assert got == want
        assert got["results"] and all(r["path"].startswith("Concepts/")
                                      for r in got["results"])
        bad = await call(session, "read", note="Home")
        assert said(bad)["message"].startswith("no note named Home")

    serve(demo, body, "--scope", "concepts")


def test_write_handover_prompt_carries_the_skeleton_kbase_new_writes(demo: Path) -> None:
    proc = run_kbase("new", "handover", "--track", "7", cwd=demo)
    assert proc.returncode == 0, proc.stderr
    written = demo / proc.stdout.strip()
    skeleton = written.read_text(encoding="utf-8")
    written.unlink()

    async def body(session: ClientSession) -> None:
        listed = (await session.list_prompts()).prompts
        assert [p.name for p in listed] == ["write_handover"]
        got = await session.get_prompt("write_handover", {"track": "7"})
        block = got.messages[0].content
        assert isinstance(block, TextContent)
        assert f"```markdown\n{skeleton}```" in block.text
        assert "kbase handover check" in block.text and "80/100" in block.text

    serve(demo, body)


def test_unreadable_input_gets_json_rpc_errors(demo: Path) -> None:
    """Input that is not JSON is answered with -32700, JSON that is not a message with
    -32600 (the id kept when there is one), and the server goes on serving."""
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}
    lines = [json.dumps(init), '{"jsonrpc": "2.0", "method": "notifications/initialized"}',
             "this is not json {", '{"jsonrpc": "2.0", "id": 7}', "[1, 2]",
             json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "status", "arguments": {}}})]
    proc = subprocess.Popen([sys.executable, "-m", "kbase_ci", "mcp"], cwd=demo, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("\n".join(lines) + "\n")
    proc.stdin.flush()
    got = [json.loads(proc.stdout.readline()) for _ in range(5)]
    proc.stdin.close()
    proc.wait(timeout=60)
    assert got[0]["id"] == 1 and "result" in got[0]
    assert got[1] == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32700, "message": got[1]["error"]["message"]}}
    assert got[1]["error"]["message"].startswith("Parse error: the line is not JSON")
    assert (got[2]["id"], got[2]["error"]["code"]) == (7, -32600)
    assert (got[3]["id"], got[3]["error"]["code"]) == (None, -32600)
    assert "batch" in got[3]["error"]["message"]
    assert got[4]["id"] == 2 and not got[4]["result"].get("isError")
