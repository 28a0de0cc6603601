"""`kbase mcp`: the query tools over the Model Context Protocol (stdio), with the official
SDK's `MCPServer`. A thin layer: a tool for every query of the registry
(kbase_ci.query.registry, made a tool by `adapter`), each returning the CLI's JSON for the
same question as the tool's text.

Descriptions are written for an agent deciding *when* to call a tool; each error names
what to change.
"""

from __future__ import annotations

import inspect
import sys
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult, Tool
from pydantic import Field, ValidationError

from kbase_ci import __version__
from kbase_ci.mcp import prompts
from kbase_ci.mcp.adapter import READ_ONLY, invalid_arguments, tool_function, unknown_arguments
from kbase_ci.mcp.framing import serve_stdio
from kbase_ci.mcp.schema import strict
from kbase_ci.mcp.serverstate import ServerState
from kbase_ci.query.fold import tools

INSTRUCTIONS = """\
Tools over a Git repository of Markdown notes (Obsidian-style [[wikilinks]], #tags,
YAML frontmatter), answered from its committed index with the work tree's current edits
overlaid; every tool returns the JSON `kbase` prints for the same question. Paths are
relative to the repository root. Which tool when: `search` when you do not know note
names; `read` a hit (or one section of it); `links` (action explore) to see what links
to and from a note you found; `context` for the text of several related notes within a
token budget; `graph` (action explore, summary) for a cheap map of a neighbourhood;
`reading_order` for what to read first; `links` and `tags` for exact lists; `digest` to
summarize, define or compare; `gaps` for what is missing; `handover_latest` to resume
someone's work; `status` when answers look stale. Every answer carries an `index` object
saying which commit the index is from and which notes changed since (those are read from
the work tree). Parameters many tools share: `note` is a note's path, title or alias
(case-insensitive); `max_tokens` (default 8000, at least 1) bounds the answer's JSON (lists
are cut from their least relevant end, and `truncated` says what went); `tags` keeps
notes with all of them (a tag includes its child tags), `domain` those of one domain (a
top folder, unless configured); `timeout` answers after so many seconds with what was
found (`partial`)."""


class KbaseServer(MCPServer[Any]):
    """The SDK's server with its tool schemas compact (kbase_ci.mcp.schema) and strict:
    an argument a tool does not take is refused, and arguments its schema refuses are
    kbase's JSON error naming the parameter (kbase_ci.mcp.adapter)."""

    takes: dict[str, tuple[str, ...]]
    """Each tool's parameters, in its schema's order."""

    async def list_tools(self) -> list[Tool]:
        return [t.model_copy(update={"input_schema": strict(t.input_schema)})
                for t in await super().list_tools()]

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None
                        ) -> CallToolResult | InputRequiredResult:
        takes = self.takes.get(name)
        unknown = [k for k in arguments if takes is not None and k not in takes]
        if takes is not None and unknown:
            return unknown_arguments(name, unknown, takes)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError) and \
                    not isinstance(exc, UnexpectedToolError):
                return invalid_arguments(name, exc.__cause__)
            raise


def build_server(warm: ServerState) -> MCPServer[Any]:
    """A tool for every query of the registry (or fold of queries), in its order, and
    the prompt."""
    server = KbaseServer(
        "kbase", title="kbase: notes, links and handovers of this repository",
        instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    server.takes = {}
    for tool in tools():
        function = tool_function(tool, warm)
        server.takes[tool.name] = tuple(inspect.signature(function).parameters)
        server.add_tool(function, name=tool.name, description=tool.tool, annotations=READ_ONLY)

    @server.prompt(name="write_handover", title="Write a handover that passes the checks",
                   description=(
                       "Walks you through writing a handover note for this repository: the "
                       "skeleton from its note type schema, what each part needs, and how "
                       "to verify it with `kbase handover check`."))
    def write_handover(
        track: Annotated[str | None, Field(description="The work track (frontmatter "
                                                       "`track:`).")] = None,
        title: Annotated[str | None, Field(description="The note's title.")] = None,
    ) -> str:
        return prompts.write_handover(warm, track=track, title=title)

    return server


def serve(warm: ServerState) -> None:
    """Open the index now (so a broken `--index` fails before the client connects), then
    answer over stdin/stdout until the client closes them."""
    warm.view()  # takes the warm state's lock itself
    server = build_server(warm)
    print(f"kbase mcp: serving {warm.root} over stdio", file=sys.stderr)
    anyio.run(serve_stdio, server)

