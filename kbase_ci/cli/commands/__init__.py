"""One module per `kbase` subcommand: `add_parser(subparsers)` and `run(args) -> int`,
a thin layer over the library (no git, no flow logic)."""
