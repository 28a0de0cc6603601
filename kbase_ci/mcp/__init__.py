"""`kbase mcp`: the query tools as a Model Context Protocol server (issue 9)."""
