"""The envelope of every query answer: where it comes from (`IndexInfo`, `ScopeRef`) and
what a token budget cut from it (`Truncated`). Answers, their items and these are
`kbase_ci.typedjson.Record`s; their JSON (what the CLI prints and the MCP tools return)
is made once, at the edge, by `to_json()`."""

from __future__ import annotations

from kbase_ci.typedjson import Record, json_field


class ScopeRef(Record):
    """The scoped index an answer comes from (`--scope`)."""

    name: str
    stale: bool
    reason: str | None


class IndexInfo(Record):
    """Where every answer comes from: the index's commit and what changed since."""

    source_commit: str | None
    built_at: str | None
    stale_count: int
    """Notes changed since the index: survives a budget, the list is cut first."""
    stale_notes: tuple[str, ...]
    overlaid: bool
    origin: str
    scope: ScopeRef | None = json_field(default=None, omit=True)


class Truncated(Record):
    """What `payload.fit` cut to keep an answer within its budget."""

    max_tokens: int
    tokens: int
    lists: dict[str, str]
    """Each list cut: `kept/total` items, lists named by their keys joined with `.`."""
    shortened: list[str]
    unset: bool | None = json_field(default=None, omit=True)
    """True when, as a last resort, fields that say nothing were left out."""
