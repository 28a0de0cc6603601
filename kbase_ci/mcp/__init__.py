"""`kbase mcp`: the query tools as a Model Context Protocol server (`server`), answering
from a warm index (`warm`, `watch`) with the CLI's answers (`tools`, `prompts`)."""
