"""What `kbase mcp`'s tool list costs every agent before its first call:
`python -m bench.mcp_schema`.

Starts the real server (`kbase mcp`, on a scratch one-note repository indexed for it)
with the MCP SDK's stdio client, asks `tools/list`, and prints each tool's cost (its
JSON as sent: name, description, input schema, annotations) and the whole answer's, in
the estimate budgets use (kbase_ci.query.payload.cost), beside the ceiling a test pins
(kbase_ci.mcp.schema.CEILING), and the server instructions' cost (sent once, at
`initialize`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@kbase.invalid",
       "-c", "commit.gpgsign=false"]


async def listed(repo: Path) -> tuple[list[Any], str]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    env = {**os.environ, "PYTHONPATH": str(ROOT), "KBASE_OFFLINE": "1"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "kbase_ci", "mcp"],
                                   cwd=repo, env=env)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), \
                ClientSession(read, write) as session:
            init = await session.initialize()
            return list((await session.list_tools()).tools), init.instructions or ""


def main() -> None:
    from kbase_ci.mcp.schema import CEILING, tokens
    from kbase_ci.query.payload import cost

    with tempfile.TemporaryDirectory(prefix="kbase-mcp-schema-") as tmp:
        repo = Path(tmp)
        (repo / "Note.md").write_text("# Note\n\nA note.\n", encoding="utf-8")
        for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-qm", "n")):
            subprocess.run([*GIT, *args], cwd=repo, check=True)
        subprocess.run([sys.executable, "-m", "kbase_ci", "index"], cwd=repo, check=True,
                       capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        tools, instructions = anyio.run(listed, repo)
    for t in tools:
        print(f"{t.name:18} {tokens([t]):5} tokens  ({len(t.input_schema['properties'])} "
              "parameters)")
    print(f"{'tools/list':18} {tokens(tools):5} tokens for {len(tools)} tools "
          f"(ceiling {CEILING}); instructions {cost(instructions)} tokens")


if __name__ == "__main__":
    main()
