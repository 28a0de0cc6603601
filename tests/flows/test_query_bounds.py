"""Issue 28, bounded everywhere: every number a query takes has a documented maximum
declared once on the query's parameter record (`Param(le=...)`), so the CLI (exit 2)
and the MCP server (a tool error, and `maximum` in the tool's schema) refuse the same
values. `read --depth 1000000000000` spun forever; 41 such MCP calls left `ping`
unanswered. The server exits when its stdin closes, a call in flight or not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import GIT_ENV, REPO, run_kbase

from kbase_ci.query import registry
from kbase_ci.query.choices import MAX_BUDGET
from kbase_ci.query.spec import MAX_DEPTH, MAX_LIMIT, fields_of

NOTES: dict[str, str | bytes] = {
    "A.md": "# A\n\nsee [[B]]\n", "B.md": "# B\n\nsee [[C]]\n", "C.md": "# C\n\nsee [[A]]\n",
    ".gitignore": ".kbase/\n"}
HUGE = 10**12


def test_every_number_a_query_takes_has_a_maximum() -> None:
    unbounded = [(q.name, f.name) for q in registry.every() for f in fields_of(q.params)
                 if f.type in (int, float) and f.param.le is None]
    assert unbounded == []


@pytest.mark.parametrize("argv", [
    ("read", "A", "--expand-links", "--depth", str(HUGE)),
    ("graph", "explore", "A", "--depth", str(HUGE)),
    ("graph", "neighborhood", "A", "--limit", str(HUGE)),
    ("prerequisites", "A", "--depth", str(HUGE)),
    ("reading-order", "--from", "A", "--depth", str(HUGE)),
    ("search", "see", "--limit", str(HUGE)),
    ("notes", "--max-tokens", str(HUGE)),
    ("context", "A", "--max-tokens", str(HUGE)),
])
def test_the_cli_refuses_past_the_maximum_at_once(make_repo: Callable[..., Path],
                                                  argv: tuple[str, ...]) -> None:
    root = make_repo(NOTES)
    env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kbase_ci", *argv], cwd=root, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "must be at most" in proc.stderr and str(HUGE) in proc.stderr
    assert time.monotonic() - start < 30


def test_the_maximum_itself_is_accepted(make_repo: Callable[..., Path]) -> None:
    root = make_repo(NOTES)
    for argv in (("read", "A", "--expand-links", "--depth", str(MAX_DEPTH)),
                 ("graph", "neighborhood", "A", "--limit", str(MAX_LIMIT)),
                 ("notes", "--max-tokens", str(MAX_BUDGET))):
        proc = run_kbase(*argv, cwd=root)
        assert proc.returncode == 0, (argv, proc.stderr)


class Server:
    """`kbase mcp` over raw JSON-RPC lines (what any client sends)."""

    def __init__(self, root: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
        self.proc = subprocess.Popen([sys.executable, "-m", "kbase_ci", "mcp"], cwd=root,
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}})
        assert self.answer(0)["result"]
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def answer(self, rid: int) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            got: dict[str, Any] = json.loads(self.proc.stdout.readline())
            if got.get("id") == rid:
                return got

    def call(self, rid: int, tool: str, arguments: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}})


def test_the_server_refuses_past_the_maximum_and_keeps_answering(
        make_repo: Callable[..., Path]) -> None:
    root = make_repo(NOTES)
    assert run_kbase("index", cwd=root).returncode == 0
    server = Server(root)
    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        tools = {t["name"]: t for t in server.answer(1)["result"]["tools"]}
        # The cap is a guard, not guidance: not in the compact schema (kbase_ci.mcp.schema),
        # still enforced (below: a depth past it is a tool error, and the server answers).
        assert "maximum" not in tools["read"]["inputSchema"]["properties"]["depth"]
        for i in range(41):
            server.call(100 + i, "read", {"note": "A", "expand_links": True, "depth": HUGE})
        server.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        start = time.monotonic()
        assert server.answer(2)["result"] == {}
        assert time.monotonic() - start < 30
        server.call(3, "read", {"note": "A", "expand_links": True, "depth": HUGE})
        got = server.answer(3)
        assert got.get("result", {}).get("isError") is True or "error" in got
    finally:
        server.proc.kill()
        server.proc.wait()


def test_the_server_exits_when_stdin_closes_with_a_call_in_flight(
        make_repo: Callable[..., Path]) -> None:
    root = make_repo({**NOTES, "Big.md": "# Big\n\n" + "see [[A]]. " * 200_000 + "\n"})
    assert run_kbase("index", cwd=root).returncode == 0
    server = Server(root)
    server.call(1, "links", {"action": "backlinks", "note": "A"})  # slow, still running below
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    try:
        assert server.proc.wait(timeout=20) == 0
    finally:
        server.proc.kill()
