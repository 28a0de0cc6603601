"""The query tools, each declared once (`spec.Query`, one module per `kbase` command
word: `search`, `tags` with `tags suggest`, `handover` for `handover latest`, ...): the
CLI's parsers, the MCP tools and docs/mcp.md's tool table (`docs`) are made from them,
in `registry` order."""
