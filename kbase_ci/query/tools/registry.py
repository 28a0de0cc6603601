"""The ordered query registry: the `kbase` command words that are queries, each the
module of `kbase_ci.query.tools` declaring its tools (`QUERIES`: `tags` declares `tags`
and `tags suggest`). `kbase --help` lists the commands, and `kbase mcp` the tools, in
this order.

Only the words live here, so `kbase check` (which must not load the query code) and a
query (which loads its own module only) pay for a tuple, not for every declaration.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kbase_ci.query.tools.fold import Fold
    from kbase_ci.query.tools.spec import Query

WORDS = ("search", "read", "links", "backlinks", "explore", "context", "graph", "gaps",
         "prerequisites", "reading-order", "notes", "tags", "concepts", "concept",
         "summarize", "compare", "auto-index",
         "status",
         "handover")
"""`handover` is a command of its own (`handover check`); its `latest` is a query."""
COMMANDS = WORDS[:-1]
"""The words whose whole command is made from the registry."""
EXTRA = "search"
"""What every query command and tool needs beyond the core install (kbase_ci.extras):
they answer from the index. `handover latest` reads the notes, so the core has it."""


def declared(word: str) -> list[Query[Any, Any]]:
    """The tools declared by the module of command `word`."""
    module = importlib.import_module(f"kbase_ci.query.tools.{word.replace('-', '_')}")
    queries: list[Query[Any, Any]] = module.QUERIES
    return queries


def every() -> list[Query[Any, Any]]:
    """Every tool, in registry order."""
    return [q for word in WORDS for q in declared(word)]


def named(name: str) -> Query[Any, Any]:
    """The tool named `name` (as MCP names it)."""
    for q in every():
        if q.name == name:
            return q
    raise KeyError(name)


def tools() -> list[Query[Any, Any] | Fold]:
    """What `kbase mcp` offers, in registry order: each query, or the fold holding it
    (kbase_ci.query.tools.fold) in place of the fold's first query."""
    # Only `kbase mcp` and the docs ask for tools: a query command loads no fold.
    from kbase_ci.query.tools.fold import folded

    out: list[Query[Any, Any] | Fold] = []
    for q in every():
        fold = folded(q.name)
        if fold is None:
            out.append(q)
        elif fold not in out:
            out.append(fold)
    return out
