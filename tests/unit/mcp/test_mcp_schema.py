"""The tool list every agent pays for: compact schemas that keep what a client validates
(types, enums, required, defaults, an agent's bound), and a ceiling on the whole list."""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio

from kbase_ci.mcp.schema import BUDGET, CEILING, compact, tokens
from kbase_ci.mcp.server import build_server
from kbase_ci.mcp.serverstate import ServerState

PYDANTIC = {  # as the SDK makes it from a tool's signature
    "properties": {
        "title": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None,
                  "description": "A note.", "title": "Title"},
        "mode": {"default": "hybrid", "enum": ["hybrid", "bm25"], "title": "Mode",
                 "type": "string"},
        "limit": {"default": 5, "maximum": 20, "minimum": 1, "title": "Limit",
                  "type": "integer"},
        "depth": {"anyOf": [{"maximum": 100, "minimum": 0, "type": "integer"},
                            {"type": "null"}], "default": None, "title": "Depth"},
        "ratio": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}],
                  "default": None, "minimum": 2, "title": "Ratio"},
        "loud": {"default": False, "title": "Loud", "type": "boolean"},
        "max_tokens": {"default": 8000, "maximum": 1000000, "minimum": 1,
                       "title": "Max Tokens", "type": "integer"},
    },
    "required": ["mode"], "title": "echoArguments", "type": "object",
}


def test_compact_keeps_what_a_client_validates() -> None:
    got = compact(PYDANTIC)
    assert got == {
        "properties": {
            "title": {"type": "string", "description": "A note."},  # a property "title"
            "mode": {"default": "hybrid", "enum": ["hybrid", "bm25"]},
            "limit": {"default": 5, "maximum": 20, "type": "integer"},
            "depth": {"type": "integer"},
            # a union of two types stays as it is; a floor of 2 is guidance
            "ratio": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}],
                      "minimum": 2},
            "loud": {"type": "boolean"},
            "max_tokens": BUDGET,
        },
        "required": ["mode"], "type": "object",
    }
    assert PYDANTIC["properties"]["title"]["title"] == "Title"  # the input is not changed


def test_the_tool_list_stays_within_its_ceiling() -> None:
    server = build_server(ServerState(Path(tempfile.mkdtemp())))
    tools = anyio.run(server.list_tools)
    assert tools and tokens(tools) <= CEILING
    for t in tools:  # nothing pydantic-only reaches an agent
        assert "title" not in t.input_schema
        for prop in t.input_schema["properties"].values():
            assert "title" not in prop and prop.get("default", 0) is not None
