"""Every query answer, written to files, so a refactor can prove it changed none of them:
`python -m bench.golden OUT [--vaults demo,obsidian-tasks-docs,...]`, then `diff -r`
the OUT of two trees.

For each vault (the bundled demo vault and the shared corpora present): a git repository
with fixed commit dates (so commit ids, and every answer naming them, repeat), `kbase
index` with the static shared model, `kbase publish --push` to a local bare remote, a
fresh clone with the index branch fetched; then every query command in its JSON, text,
pretty and budgeted forms (`cli/NN-words.out`: exit code, stdout, stderr), and the same
questions through the real MCP client (`mcp/NN-tool.out`: is_error, text). Answers
name paths: the work folder (`--work`) is written as `$WORK`, so trees measured in two
work folders at once compare equal.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

from bench.workloads import CORPORA, MODEL, ROOT, published_clone

DATES = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
SOURCES = {"demo": ROOT / "fixtures" / "demo-vault",
           **{n: CORPORA / n / "vault"
              for n in ("obsidian-tasks-docs", "data-engineering-wiki", "dnd-5e-srd")}}


def _env() -> dict[str, str]:
    return {**os.environ, **DATES, "PYTHONPATH": str(ROOT), "KBASE_OFFLINE": "1",
            "NO_COLOR": "1", "COLUMNS": "100", "PYTHONHASHSEED": "0"}


def _kbase(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kbase_ci", *args], cwd=cwd, env=_env(),
                          text=True, capture_output=True)


def clone(name: str, work: Path) -> Path:
    return published_clone(SOURCES[name], work / name, ["--model", str(MODEL)], _env(),
                           single_branch=False, message="vault")


def questions(note: str, title: str, other: str, tag: str | None
              ) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(tool, MCP arguments, CLI argv): the same question both ways."""
    tags = ["--tag", tag] if tag else []
    return [
        ("search", {"query": title}, ["search", title]),
        ("search", {"query": title, "mode": "bm25", "explain": True, "snippets": True},
         ["search", title, "--mode", "bm25", "--explain", "--snippets"]),
        ("search", {"query": title, "mode": "semantic", "concise": True, "limit": 10},
         ["search", title, "--mode", "semantic", "--concise", "--limit", "10"]),
        ("search", {"query": "how do I configure this", "limit": 3},
         ["search", "how do I configure this", "--limit", "3"]),
        ("search", {"query": "qzxv wvkpj", "mode": "bm25"}, ["search", "qzxv wvkpj",
                                                              "--mode", "bm25"]),
        ("read", {"note": note}, ["read", note]),
        ("read", {"note": note, "expand_links": True, "max_tokens": 3000},
         ["read", note, "--expand-links", "--max-tokens", "3000"]),
        ("links", {"action": "links", "note": note}, ["links", note]),
        ("links", {"action": "backlinks", "note": note}, ["backlinks", note]),
        ("links", {"action": "backlinks", "note": note, "concise": True},
         ["backlinks", note, "--concise"]),
        ("links", {"action": "explore", "note": note}, ["explore", note]),
        ("links", {"action": "explore", "note": other, "concise": True},
         ["explore", other, "--concise"]),
        ("context", {"note": note, "max_tokens": 2000},
         ["context", note, "--max-tokens", "2000"]),
        ("context", {"query": title, "max_tokens": 1500, "strategy": "importance"},
         ["context", "--query", title, "--max-tokens", "1500", "--strategy", "importance"]),
        ("graph", {"action": "explore", "note": note, "summary": True},
         ["graph", "explore", note, "--summary"]),
        ("graph", {"action": "hubs"}, ["graph", "hubs"]),
        ("graph", {"action": "path", "source": note, "target": other},
         ["graph", "path", note, other]),
        ("graph", {"action": "neighborhood", "note": note, "depth": 1},
         ["graph", "neighborhood", note, "--depth", "1"]),
        ("graph", {"action": "clusters", "max_tokens": 2000},
         ["graph", "clusters", "--max-tokens", "2000"]),
        ("graph", {"action": "orphans"}, ["graph", "orphans"]),
        ("gaps", {"limit": 5}, ["gaps", "--limit", "5"]),
        ("gaps", {"kinds": ["concept"], "limit": 5, "concise": True},
         ["gaps", "--kind", "concept", "--limit", "5", "--concise"]),
        ("reading_order", {"action": "prerequisites", "note": note}, ["prerequisites", note]),
        ("reading_order", {"action": "order", "start": note, "depth": 1},
         ["reading-order", "--from", note, "--depth", "1"]),
        ("tags", {"action": "notes", "tags": [tag]} if tag else {"action": "notes"},
         ["notes", *tags]),
        ("tags", {"action": "list"}, ["tags"]),
        ("tags", {"action": "list", "tree": True, "stats": True}, ["tags", "--tree", "--stats"]),
        ("tags", {"action": "suggest", "note": note}, ["tags", "suggest", note]),
        ("status", {}, ["status"]),
        ("read", {"note": "No Such Note Anywhere"}, ["read", "No Such Note Anywhere"]),
        ("search", {"query": title, "domain": "zz-no-domain"},
         ["search", title, "--domain", "zz-no-domain"]),
    ]


def cli_only(note: str, title: str) -> list[list[str]]:
    """Forms only the CLI has: text, pretty, pictures, budgets."""
    return [
        ["search", title, "--format", "text", "--snippets"],
        ["search", title, "--pretty", "--max-tokens", "600"],
        ["read", note, "--format", "text"],
        ["links", note, "--format", "text"],
        ["backlinks", note, "--format", "text", "--max-tokens", "300"],
        ["explore", note, "--format", "text"],
        ["context", note, "--format", "text", "--max-tokens", "1200"],
        ["graph", "neighborhood", note, "--format", "mermaid"],
        ["graph", "neighborhood", note, "--format", "dot"],
        ["graph", "hubs", "--format", "text"],
        ["graph", "explore", note, "--stream"],
        ["gaps", "--format", "text", "--limit", "5"],
        ["prerequisites", note, "--format", "text"],
        ["reading-order", "--format", "text", "--limit", "10"],
        ["notes", "--format", "text"],
        ["tags", "--tree", "--format", "text"],
        ["status", "--format", "text"],
        ["search", title, "--limit", "0"],
        ["search", title, "--mode", "nonsense"],
        ["read", note, "--max-tokens", "0"],
        ["handover", "latest", "--format", "json"],
    ]


async def _mcp(clone_dir: Path, asks: list[tuple[str, dict[str, Any]]]
               ) -> tuple[list[dict[str, Any]], list[tuple[bool, str]]]:
    from mcp import ClientSession, StdioServerParameters, stdio_client
    from mcp.types import TextContent

    params = StdioServerParameters(command=sys.executable, args=["-m", "kbase_ci", "mcp"],
                                   cwd=clone_dir, env=_env())
    out: list[tuple[bool, str]] = []
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            listed = (await session.list_tools()).tools
            tools = [{"name": t.name, "description": t.description,
                      "input_schema": t.input_schema} for t in listed]
            for tool, arguments in asks:
                result = await session.call_tool(tool, arguments)
                block = result.content[0]
                assert isinstance(block, TextContent)
                out.append((bool(result.is_error), block.text))
    return tools, out


def _slug(words: list[str]) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", " ".join(words))[:60].strip("-")


def _put(path: Path, text: str, work: Path) -> None:
    path.write_text(text.replace(str(work), "$WORK"), encoding="utf-8")


def record(name: str, work: Path, out: Path) -> None:
    dest = clone(name, work)
    hubs = json.loads(_kbase("graph", "hubs", "--limit", "2", "--min-links", "0",
                             cwd=dest).stdout)
    note, title = hubs["nodes"][0]["path"], hubs["nodes"][0]["title"]
    other = hubs["nodes"][1]["path"]
    tags = json.loads(_kbase("tags", cwd=dest).stdout).get("tags") or []
    tag = tags[0]["tag"] if tags else None
    asks = questions(note, title, other, tag)
    cli_dir, mcp_dir = out / name / "cli", out / name / "mcp"
    cli_dir.mkdir(parents=True, exist_ok=True)
    mcp_dir.mkdir(parents=True, exist_ok=True)
    argvs = [argv for _, _, argv in asks] + cli_only(note, title)
    for i, argv in enumerate(argvs):
        proc = _kbase(*argv, cwd=dest)
        _put(cli_dir / f"{i:02d}-{_slug(argv)}.out",
             f"$ kbase {' '.join(argv)}\nexit {proc.returncode}\n--- stdout\n{proc.stdout}"
             f"--- stderr\n{proc.stderr}", work)
    tools, answers = anyio.run(_mcp, dest, [(t, a) for t, a, _ in asks])
    _put(mcp_dir / "tools.json", json.dumps(tools, indent=1, sort_keys=True), work)
    for i, ((tool, arguments, _), (is_error, text)) in enumerate(zip(asks, answers,
                                                                      strict=True)):
        _put(mcp_dir / f"{i:02d}-{tool}.out",
             f"{tool} {json.dumps(arguments, sort_keys=True)}\nis_error {is_error}\n{text}\n",
             work)
    print(f"{name}: {len(argvs)} CLI answers, {len(asks)} MCP answers -> {out / name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--vaults", default=",".join(SOURCES))
    parser.add_argument("--work", type=Path, default=Path("/tmp/kbase-golden"))
    args = parser.parse_args(argv)
    for name in args.vaults.split(","):
        if not SOURCES[name].is_dir():
            print(f"{name}: skipped ({SOURCES[name]} absent)")
            continue
        record(name, args.work, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
