"""`kbase mcp`: the SDK's own stdio client starts the real server as a subprocess, lists
its tools, and checks every answer against the CLI's JSON for the same question."""

from __future__ import annotations

import json
import os
import shutil
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
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_lists_every_tool_with_a_description_and_schema(demo: Path) -> None:
    async def body(session: ClientSession) -> None:
        listed = (await session.list_tools()).tools
        names = {t.name for t in listed}
        assert names == {"search", "explore", "read", "context", "gaps", "handover_latest"}
        for t in listed:
            assert t.description and len(t.description) > 80, t.name
            assert t.annotations is not None and t.annotations.read_only_hint
        search = next(t for t in listed if t.name == "search")
        props = search.input_schema["properties"]
        assert search.input_schema["required"] == ["query"]
        assert props["limit"]["default"] == 5 and props["concise"]["default"] is False
        assert set(props["mode"]["enum"]) == {"hybrid", "bm25", "semantic"}

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
        ("explore", {"note": "Home"}, ["explore", "Home"]),
        ("explore", {"note": "Concepts/Linking.md", "concise": True},
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


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(demo: Path) -> None:
    async def body(session: ClientSession) -> None:
        bad = await call(session, "explore", note="Hme")
        assert bad.is_error and text_of(bad) == "no note named Hme; did you mean Home?"
        bad = await call(session, "read", note="Getting Started", section="Uninstall")
        assert bad.is_error and "no heading 'Uninstall'" in text_of(bad)
        assert "Install" in text_of(bad)  # names the headings there are
        bad = await call(session, "search", query="zebra xylophone", mode="bm25",
                         tags=["howto"])
        assert bad.is_error
        first, _, rest = text_of(bad).partition("\n")
        assert first == ("no results for 'zebra xylophone': try fewer or different words, "
                         "or drop the tag filter")
        tried = json.loads(rest)["not_found"]["tried"]
        assert tried["terms"] == ["zebra", "xylophone"] and tried["filters"]["tags"] == [
            "howto"]
        bad = await call(session, "search", query="install", limit=0)
        assert bad.is_error and "limit" in text_of(bad)
        bad = await call(session, "search", query="install", mode="fuzzy")
        assert bad.is_error and "mode" in text_of(bad)
        bad = await call(session, "handover_latest", track="nope")
        assert bad.is_error and text_of(bad).startswith("no handover for track nope")
        bad = await call(session, "read")
        assert bad.is_error and "note" in text_of(bad)
        good = await answer(session, "read", note="Home")
        assert good["path"] == "Home.md"

    serve(demo, body)


def test_answers_follow_note_edits_between_calls(tmp_path: Path, model: Path) -> None:
    repo = _build_repo(tmp_path / "repo", model)
    linking = repo / "Concepts" / "Linking.md"

    async def body(session: ClientSession) -> None:
        first = await answer(session, "explore", note="Linking", concise=True)
        assert "Getting Started.md" not in first["outlinks"]
        assert first["index"]["stale_notes"] == []

        # Edited: a new link and a new word, not committed, no rebuild.
        linking.write_text(linking.read_text(encoding="utf-8")
                           + "\nSee [[Getting Started]] for the quokka setup.\n",
                           encoding="utf-8")
        edited = await answer(session, "explore", note="Linking", concise=True)
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
        gone = await call(session, "search", query="quokka", mode="bm25")
        assert gone.is_error

        # Added (tracked, not committed) and then deleted.
        (repo / "Wombat.md").write_text("# Wombat\n\nLinks to [[Home]].\n", encoding="utf-8")
        git(repo, "add", "Wombat.md")
        added = await answer(session, "read", note="Wombat")
        assert added["path"] == "Wombat.md"
        back = await answer(session, "explore", note="Home")
        assert "Wombat.md" in [b["path"] for b in back["backlinks"]]
        (repo / "Wombat.md").unlink()
        gone = await call(session, "read", note="Wombat")
        assert gone.is_error and text_of(gone).startswith("no note named Wombat")
        back = await answer(session, "explore", note="Home")
        assert "Wombat.md" not in [b["path"] for b in back["backlinks"]]

        # Committed and re-indexed: the server reopens the rebuilt index.
        git(repo, "rm", "-q", "--cached", "Wombat.md")
        git(repo, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-qam", "edit")
        proc = run_kbase("index", "--model", str(model), cwd=repo)
        assert proc.returncode == 0, proc.stderr
        fresh = await answer(session, "explore", note="Linking", concise=True)
        head = git(repo, "rev-parse", "HEAD").strip()
        assert fresh["index"]["source_commit"] == head
        assert fresh["index"]["stale_notes"] == []
        assert "Getting Started.md" in fresh["outlinks"]

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
        assert bad.is_error and text_of(bad).startswith("no note named Home")

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
