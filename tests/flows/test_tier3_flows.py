"""The tier-3 queries of issue 31 end to end: the real MCP client against `kbase mcp`
answers as the CLI does on fixtures/tier3; and on a shared vault (skipped when
../shared/corpora is absent) they answer with located lines."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import FIXTURES, GIT_ENV, REPO, corpus_repo, git, run_kbase
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent
from querykit import query

CALLS: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
    ("digest", {"action": "concepts", "min_notes": 1}, ("concepts", "--min-notes", "1")),
    ("digest", {"action": "concept", "name": "Trap Interrupt"}, ("concept", "Trap Interrupt")),
    ("digest", {"action": "concept", "name": "Windowed Aggregation", "definition": True},
     ("concept", "Windowed Aggregation", "--definition")),
    ("digest", {"action": "summarize", "note": "Kafka"}, ("summarize", "Kafka")),
    ("digest", {"action": "summarize", "note": "Kafka", "extract": "code-snippets"},
     ("summarize", "Kafka", "--extract", "code-snippets")),
    ("digest", {"action": "compare", "a": "Streaming", "b": "Batch", "concept": "Watermark Policy"},
     ("compare", "Streaming", "Batch", "--concept", "Watermark Policy")),
    ("digest", {"action": "auto_index", "tags": ["batch"]}, ("auto-index", "--tag", "batch")),
]


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("tier3") / "vault"
    shutil.copytree(FIXTURES / "tier3" / "vault", repo)
    (repo / ".gitignore").write_text(".kbase/\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "-m", "v")
    assert run_kbase("index", cwd=repo).returncode == 0
    return repo


def _text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def test_mcp_tools_answer_as_the_cli(vault: Path) -> None:
    got: dict[int, tuple[bool, str]] = {}

    async def main() -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO), **GIT_ENV}
        params = StdioServerParameters(command=sys.executable, args=["-m", "kbase_ci", "mcp"],
                                       cwd=vault, env=env)
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                schema = next(t for t in (await session.list_tools()).tools
                              if t.name == "digest").input_schema
                assert schema["properties"]["action"]["enum"] == [
                    "summarize", "concept", "concepts", "compare", "auto_index"]
                # an agent drafts the note; writing files is the command line's
                assert "write" not in schema["properties"]
                for n, (tool, args, _) in enumerate(CALLS):
                    result = await session.call_tool(tool, args)
                    got[n] = (bool(result.is_error), _text(result))
                bad = await session.call_tool("digest", {"action": "summarize", "note": "Kafka",
                                                            "extract": "poems"})
                got[-1] = (bool(bad.is_error), _text(bad))

    anyio.run(main)
    for n, (_tool, _args, argv) in enumerate(CALLS):
        is_error, text = got[n]
        assert not is_error, text
        code, cli, err = query(vault, *argv)
        assert code == 0, err
        assert json.loads(text) == cli, argv
    assert got[-1][0] and "extract" in got[-1][1]


def test_on_a_shared_vault(tmp_path: Path) -> None:
    repo = corpus_repo("data-engineering-wiki", tmp_path / "dew")
    assert run_kbase("index", cwd=repo).returncode == 0
    code, ans, err = query(repo, "concepts", "--limit", "10")
    assert code == 0, err
    assert len(ans["concepts"]) == 10
    assert [c["notes"] for c in ans["concepts"]] == sorted(
        (c["notes"] for c in ans["concepts"]), reverse=True)
    spark = next(c for c in ans["concepts"] if c["key"] == "apache spark")
    assert spark["documented_by"]["path"] == "Tools/Data Processing/Apache Spark.md"
    code, ans, _ = query(repo, "concept", "change data capture")
    assert ans["documented_by"]["path"] == "Concepts/Data Ingestion/Change Data Capture.md"
    assert ans["definition"][0]["text"].startswith("Change data capture (CDC) is")
    lines = (repo / ans["definition"][0]["path"]).read_text(encoding="utf-8").splitlines()
    assert ans["definition"][0]["text"][:40] in lines[ans["definition"][0]["line"] - 1]
    assert len(ans["discussed"]) >= 3
    for d in ans["discussed"]:
        text = (repo / d["path"]).read_text(encoding="utf-8").splitlines()[d["line"] - 1]
        assert "change data capture" in text.casefold(), d
    code, ans, _ = query(repo, "summarize", "Change Data Capture")
    assert code == 0 and ans["lead"] and ans["outline"] and ans["key_sentences"]
    code, ans, _ = query(repo, "summarize", "Sargable Expressions", "--extract",
                         "code-snippets")
    assert code == 0 and ans["code_snippets"][0]["language"] == "sql"
