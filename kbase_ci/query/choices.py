"""The words a query's choice parameters take, declared once: the answers read them
(`search`, `context`, `gaps`, `graph`), and the query tools (kbase_ci.query.tools) offer
them as the CLI's choices and the MCP tools' enums, and check a call against them.

A module of its own, and light: every query's declaration loads it (so do `kbase
--help` and the MCP server), and an answer's module must not import a declaration,
which imports the answer back when it runs.
"""

from __future__ import annotations

MODES = ("hybrid", "bm25", "semantic")
"""`search --mode`: which rankers a search runs: both, fused, or one of them."""

CONFIDENCE = ("high", "medium", "low", "none")
"""A search hit's confidence, best first (kbase_ci.query.evidence.LEVELS);
`search --min-confidence` leaves out hits below the one given."""

STRATEGIES = ("breadth", "importance", "tags")
"""`context --strategy`: nearest notes first, best-scored first, or notes sharing tags
followed too."""

GAP_KINDS = ("note", "concept", "attachment")
"""`gaps --kind`, in the order the answer lists them: notes to write first (what a reader
follows a link to and finds missing), then concepts, then missing attachments (a file
someone forgot to commit is a fix, not something to write)."""

GRAPH_ACTIONS = ("explore", "path", "neighborhood", "hubs", "clusters", "orphans")
"""`graph ACTION`: a map around a note first (the cheapest overview for an agent)."""
