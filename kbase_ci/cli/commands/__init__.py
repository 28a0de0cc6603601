"""One module per `kbase` subcommand that is not a query (those are made from the query
registry: kbase_ci.cli.queryargs): `add_parser(subparsers)` and `run(args) -> int`, a
thin layer over the library (no git, no flow logic)."""
