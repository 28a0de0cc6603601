"""The tool list an agent pays for in every conversation: each tool's input schema as
compact as JSON Schema allows without losing a constraint a client validates against.

The SDK's schemas come from pydantic and carry what only pydantic needs: a `title` on
every property and on the schema (a client shows the property's name), and an optional
parameter as `anyOf: [T, {"type": "null"}]` with `"default": null` (an optional
parameter may simply be left out, which is what a client does). `compact` removes those;
arguments are still validated by the tool's own parameter model, which accepts an
explicit null as before. `tokens` is what the list costs, in the estimate budgets use
(kbase_ci.query.payload.cost); a test pins its ceiling.
"""

from __future__ import annotations

from typing import Any

from kbase_ci.query.payload import cost, dumps

CEILING = 3000
"""Tokens the whole `tools/list` answer may cost: what every agent's context pays before
its first call: issue 31's target. 20 tools cost 3,968; folding near-twins into tools with
an `action` (kbase_ci.query.fold) makes 11 that cost 2,965 (docs/mcp.md)."""
_NULL = {"type": "null"}
BUDGET = {"type": "integer"}
"""`max_tokens`, which every tool takes: its default, bounds and meaning are said once, in
the server's instructions (kbase_ci.mcp.server), not fifteen times; a call is still
checked against them."""
SAFETY_CAP = 100
"""A `maximum` this high guards against a call running forever (query/spec.py and choices:
MAX_DEPTH, MAX_LIMIT, MAX_SECONDS, MAX_BUDGET) rather than guiding a call: the tool still
refuses past it, with an error naming the bound; the schema need not say it."""


def _guard(key: str, value: Any) -> bool:
    """A bound no reasonable call meets: a count's floor of 0 or 1, a positive number's
    exclusive floor of 0, a safety cap (`SAFETY_CAP`). Still checked by the tool."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return ((key == "minimum" and value in (0, 1)) or (key == "exclusiveMinimum" and value == 0)
            or (key == "maximum" and value >= SAFETY_CAP))


def compact(schema: Any) -> Any:
    """`schema` without titles, `default: null` and null branches (see the module)."""
    if isinstance(schema, list):
        return [compact(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: compact(v) for k, v in schema.items()
           if k != "title" and not (k == "default" and v in (None, False))
           and not _guard(k, v)}
    branches = out.get("anyOf")
    if isinstance(branches, list) and _NULL in branches:
        rest = [b for b in branches if b != _NULL]
        if len(rest) == 1 and isinstance(rest[0], dict):
            del out["anyOf"]
            out = {**rest[0], **out}
    if "enum" in out and out.get("type") == "string":  # the enum says it
        del out["type"]
    if isinstance(out.get("properties"), dict):  # a property may be named "title"
        out["properties"] = {name: BUDGET if name == "max_tokens" else compact(prop)
                             for name, prop in schema["properties"].items()}
    return out


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema as listed: compact, and closed (`additionalProperties:
    false`): a client that validates against it refuses an argument the tool does not
    take, as the server does (kbase_ci.mcp.server)."""
    return {**compact(schema), "additionalProperties": False}


def tool_json(tool: Any) -> dict[str, Any]:
    """One tool of `tools/list` as sent (an `mcp.types.Tool`)."""
    got: dict[str, Any] = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
    return got


def tokens(tools: list[Any]) -> int:
    """What a `tools/list` answer holding `tools` costs (its `tools` array as sent)."""
    return cost(dumps({"tools": [tool_json(t) for t in tools]}))
