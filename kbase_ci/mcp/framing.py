"""The server's stdio transport, answering input that is not a JSON-RPC message.

The SDK's stdio transport reads one JSON-RPC message per line; a line it cannot read it
hands on as an exception, which the server then only logs, so the client waits for an
answer that never comes. JSON-RPC 2.0 says to answer: `-32700 Parse error` for text
that is not JSON, `-32600 Invalid Request` for JSON that is not a request,
notification or response (a batch array included: MCP has no batches). Here those
exceptions are taken out of the stream before the server sees it and answered on the
spot; the id is the request's when the line carried a usable one, else null.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError


def rpc_error(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error answering a line the transport could not read."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if errors and errors[0].get("type") == "json_invalid":
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=PARSE_ERROR, message=f"Parse error: the line is not JSON "
                                      f"({errors[0].get('msg', exc)})"))
    given = errors[0].get("input") if errors else None
    rid = given.get("id") if isinstance(given, dict) else None
    if isinstance(given, list):
        why = "a batch (a JSON array): MCP takes one message per line"
    else:
        why = ("not a JSON-RPC 2.0 request, notification or response: a request needs "
               '"jsonrpc": "2.0", a "method" and an "id"')
    return JSONRPCError(jsonrpc="2.0", id=rid if isinstance(rid, (str, int)) else None,
                        error=ErrorData(code=INVALID_REQUEST, message=f"Invalid Request: {why}"))


async def serve_stdio(server: MCPServer[Any]) -> None:
    """`server.run("stdio")`, with unreadable lines answered as JSON-RPC errors."""
    low = server._lowlevel_server  # what the SDK's own `run_stdio_async` runs
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](16)

        async def pump() -> None:
            async with send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        await write_stream.send(SessionMessage(rpc_error(item)))
                    else:
                        await send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            await low.run(receive, write_stream, low.create_initialization_options())
            group.cancel_scope.cancel()
