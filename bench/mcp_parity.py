"""Does `kbase mcp` answer like the CLI on vaults nobody here wrote?
`python -m bench.mcp_parity [VAULT...]`.

For each shared vault, in a fresh clone (bench/freshclone.py): the real server is
started by the MCP SDK's stdio client, its tool list is compared with the CLI's query
commands (each must have a tool), and every tool is asked one question about the vault's
best-linked note; the answer must equal the JSON the CLI prints for the same question
(an error must be an error on both sides). Prints one line per vault and each mismatch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import TextContent

from bench.concept_precision import VAULTS
from bench.freshclone import ROOT, fresh_clone, kbase
from bench.workloads import CORPORA
from kbase_ci.query import registry
from kbase_ci.query.fold import as_tool


def questions(note: str, title: str) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(tool, arguments, CLI argv) asking the same thing."""
    return [
        ("search", {"query": title, "mode": "bm25"}, ["search", title, "--mode", "bm25"]),
        ("search", {"query": title, "mode": "bm25", "explain": True},
         ["search", title, "--mode", "bm25", "--explain"]),
        # no hit: a tool error whose JSON (after the message) is the CLI's answer
        ("search", {"query": "qzxv wvkpj", "mode": "bm25"},
         ["search", "qzxv wvkpj", "--mode", "bm25"]),
        ("read", {"note": note}, ["read", note]),
        ("read", {"note": note, "expand_links": True, "max_tokens": 8000},
         ["read", note, "--expand-links", "--max-tokens", "8000"]),
        ("links", {"action": "links", "note": note}, ["links", note]),
        ("links", {"action": "backlinks", "note": note}, ["backlinks", note]),
        ("links", {"action": "backlinks", "note": note, "concise": True},
         ["backlinks", note, "--concise"]),
        ("links", {"action": "explore", "note": note}, ["explore", note]),
        ("context", {"note": note, "max_tokens": 2000},
         ["context", note, "--max-tokens", "2000"]),
        ("graph", {"action": "explore", "note": note, "summary": True},
         ["graph", "explore", note, "--summary"]),
        ("graph", {"action": "hubs"}, ["graph", "hubs"]),
        ("gaps", {"limit": 5}, ["gaps", "--limit", "5"]),
        ("reading_order", {"action": "prerequisites", "note": note}, ["prerequisites", note]),
        ("reading_order", {"action": "order", "start": note, "depth": 1},
         ["reading-order", "--from", note, "--depth", "1"]),
        ("tags", {"action": "notes"}, ["notes"]),
        ("tags", {"action": "list"}, ["tags"]),
        ("tags", {"action": "suggest", "note": note}, ["tags", "suggest", note]),
        ("status", {}, ["status"]),
    ]


async def _ask(clone: Path, asks: list[tuple[str, dict[str, Any]]]
               ) -> tuple[set[str], list[tuple[bool, str]]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "kbase_ci", "mcp"],
                                   cwd=clone, env=env)
    out: list[tuple[bool, str]] = []
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name for t in (await session.list_tools()).tools}
            for tool, arguments in asks:
                result = await session.call_tool(tool, arguments)
                block = result.content[0]
                assert isinstance(block, TextContent)
                out.append((bool(result.is_error), block.text))
    return tools, out


def check(vault: str, work: Path) -> tuple[int, int, list[str]]:
    clone = fresh_clone(vault, work)
    hubs = json.loads(kbase("graph", "hubs", "--limit", "1", "--min-links", "0",
                            cwd=clone).stdout)
    note = hubs["nodes"][0]["path"]
    title = hubs["nodes"][0]["title"]
    asks = questions(note, title)
    tools, answers = anyio.run(_ask, clone, [(t, a) for t, a, _ in asks])
    problems = [f"no tool for `kbase {q.words}`" for q in registry.every()
                if as_tool(q.name, {})[0] not in tools]
    same = 0
    for (tool, arguments, argv), (is_error, text) in zip(asks, answers, strict=True):
        proc = kbase(*argv, cwd=clone, check=False)
        if is_error:  # kbase's JSON error, where the CLI fails too
            ok = proc.returncode != 0 and not proc.stdout.strip().startswith("{") \
                and "message" in json.loads(text)["error"]
        else:
            ok = proc.stdout.strip() != "" and json.loads(proc.stdout) == json.loads(text)
        same += ok
        if not ok:
            problems.append(f"{tool} {arguments}: MCP {'error' if is_error else 'answer'} "
                            f"differs from `kbase {' '.join(argv)}` (exit {proc.returncode})")
    return same, len(asks), problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vaults", nargs="*", default=list(VAULTS))
    args = parser.parse_args(argv)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="kbase-mcp-parity-") as tmp:
        for vault in args.vaults:
            if not (CORPORA / vault / "vault").is_dir():
                print(f"{vault}: skipped (not in ../shared/corpora)")
                continue
            same, total, problems = check(vault, Path(tmp))
            missing = any("no tool" in p for p in problems)
            print(f"{vault}: {same}/{total} tool answers equal the CLI's JSON; "
                  + ("TOOLS MISSING" if missing else "every query command has a tool"))
            for p in problems:
                print(f"  {p}")
            bad += len(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
