"""`kbase mcp`: serve the query tools of the registry over MCP."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kbase_ci.cli.queryargs import add_source
from kbase_ci.errors import EXIT_OK, UsageError


def tool_list() -> str:
    """The tools `kbase mcp` serves, from the query registry: each tool, and the actions
    of one that holds several queries (kbase_ci.query.tools.fold)."""
    # Lazy: a hook run never builds this parser; `kbase --help` loads the registry anyway.
    from kbase_ci.query.tools import registry
    from kbase_ci.query.tools.fold import Fold
    from kbase_ci.query.tools.spec import fields_of

    def actions(tool: Any) -> tuple[str, ...]:
        if isinstance(tool, Fold):
            return tuple(tool.actions)
        return next((f.param.choices for f in fields_of(tool.params)
                     if f.name == tool.actions), ())

    return ", ".join(f"{t.name} (action: {', '.join(actions(t))})" if actions(t) else t.name
                     for t in registry.tools())


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "mcp", help="serve the query tools to agents over the Model Context Protocol (stdio)",
        description="A Model Context Protocol server on stdin/stdout. Its tools answer as "
                    f"the query commands do: {tool_list()}; over the committed index with "
                    "the work tree's edits overlaid. Register it with your MCP client "
                    "(docs/mcp.md).")
    p.add_argument("--repo", type=Path, default=None, metavar="DIR",
                   help="the repository to serve (default: --root, else the git work tree "
                        "around the current directory)")
    add_source(p)
    p.add_argument("--model", type=Path, default=None, metavar="PATH",
                   help="embedding model folder for hybrid search (default: as the index "
                        "was built)")
    p.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="seconds a tool call may take before it answers with a timeout "
                        "error; the other calls are served meanwhile (default: %(default)s)")


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.git.repo import find_root
    from kbase_ci.mcp.server import serve
    from kbase_ci.mcp.serverstate import ServerState

    root: Path = args.repo or args.root or find_root()
    if not root.is_dir():
        raise UsageError(f"--repo: no folder at {root}")
    if not args.timeout > 0:
        raise UsageError(f"--timeout must be a positive number of seconds, not {args.timeout}")
    serve(ServerState(root, config_path=args.config, index_dir=args.index, scope=args.scope,
               model=args.model, time_limit=args.timeout))
    return EXIT_OK
