"""`kbase mcp`: the query tools of the registry (kbase_ci.query.registry) as a Model Context
Protocol server (`server`, each query made a tool by `adapter`), answering from a warm
index (`serverstate`, `watch`), over stdio (`framing`), with a prompt (`prompts`)."""

from kbase_ci.extras import require

require("mcp", "kbase_ci.mcp (`kbase mcp`)")
