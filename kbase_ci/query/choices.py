"""The words a query's choice parameters take, and the largest budget, declared once:
the answers read them (`search`, `context`, `gaps`, `graph`; kbase_ci.query.payload the
budget), and the query declarations (kbase_ci.query.spec) offer them as the CLI's choices
and the MCP tools' enums, and check a call against them.

A module of its own, and light: `kbase --help` loads it with the declarations' types,
and the budget's printing (kbase_ci.query.payload) must not load the declarations.
"""

from __future__ import annotations

MAX_BUDGET = 1_000_000
"""Largest budget (`--max-tokens`, a tool's `max_tokens`, `.kbase.yml`'s `query.max_tokens`)."""
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
