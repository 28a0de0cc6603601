"""Issue 22, MCP: a slow tool call neither holds the server's lock (the other tools keep
answering) nor runs unbounded (it gets a timeout error at `--timeout`). The SDK's own
stdio client drives the real server."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared._stream_protocols import WriteStream
from mcp.shared.message import SessionMessage
from mcp.types import CallToolResult, TextContent

from tests.conftest import GIT_ENV, REPO, git, run_kbase, write


def _text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def _vault(root: Path, links: int) -> None:
    notes: dict[str, str | bytes] = {f"N{i}.md": f"# N{i}\n\nA small note.\n" for i in range(30)}
    notes["Big.md"] = "# Big\n\n" + " ".join(f"see [[N{i % 30}]]." for i in range(links)) + "\n"
    # A pair apart from Big: exploring them never touches Big's line, so the call after the
    # timeout is quick even while the abandoned slow call still holds a core (and the GIL).
    notes["Lone.md"] = "# Lone\n\nSee [[Pair]].\n"
    notes["Pair.md"] = "# Pair\n\nSee [[Lone]].\n"
    notes[".gitignore"] = ".kbase/\n"
    write(root, notes)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "vault")
    assert run_kbase("index", cwd=root).returncode == 0


def test_slow_call_times_out_and_never_blocks_the_others(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    _vault(root, 200_000)  # a 2.6 MB line: explore answers 200k links (about a second)
    # The limit is a third of what the slow call takes on this machine, measured now, so
    # the test holds on a fast machine and a loaded one alike. Whole (`--max-tokens 0`):
    # the server's time limit covers making the answer, not trimming it to the budget,
    # and trimming 200k links costs the CLI more than making them.
    t0 = time.monotonic()
    assert run_kbase("explore", "Big", "--max-tokens", "0", cwd=root).returncode == 0
    limit = f"{max(0.2, (time.monotonic() - t0) / 3):.2f}"
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "kbase_ci", "mcp", "--timeout", limit],
                                   cwd=root, env=env)
    done: list[tuple[str, float, CallToolResult]] = []
    slow_sent = anyio.Event()  # the slow call is on the server's stdin: send the quick one

    async def call(session: ClientSession, name: str, tool: str, after: anyio.Event | None,
                   **arguments: Any) -> None:
        if after is not None:
            await after.wait()
        result = await session.call_tool(tool, arguments)
        done.append((name, time.monotonic(), result))

    async def forward(messages: MemoryObjectReceiveStream[SessionMessage],
                      server: WriteStream[SessionMessage]) -> None:
        """The client's messages to the server's stdin, noting when a tool call went."""
        async with messages:
            async for message in messages:
                await server.send(message)
                if getattr(message.message, "method", None) == "tools/call":
                    slow_sent.set()

    async def main() -> None:
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write_), \
                    anyio.create_task_group() as pipes:
                to_server, messages = anyio.create_memory_object_stream[SessionMessage]()
                pipes.start_soon(forward, messages, write_)
                async with to_server, ClientSession(read, to_server) as session:
                    await session.initialize()
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(lambda: call(session, "slow", "links", None,
                                                   action="explore", note="Big"))
                        tg.start_soon(lambda: call(session, "quick", "read", slow_sent,
                                                   note="N3"))
                    after = await session.call_tool("links", {"action": "explore", "note": "Lone"})
                    done.append(("after", time.monotonic(), after))

    anyio.run(main)
    order = [name for name, _, _ in done]
    results = {name: result for name, _, result in done}
    # The quick call was answered while the slow one was still running ...
    assert order == ["quick", "slow", "after"], order
    assert not results["quick"].is_error and "A small note." in _text(results["quick"])
    # ... the slow one got a timeout error instead of hanging the client ...
    assert results["slow"].is_error, _text(results["slow"])[:200]
    assert f"no answer within {float(limit):g} s" in _text(results["slow"])
    # ... and the server went on serving.
    assert not results["after"].is_error
    assert json.loads(_text(results["after"]))["backlinks"]
