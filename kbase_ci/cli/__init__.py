"""The `kbase` command line: `main` (argparse, dispatch, the one place errors become exit
codes) and one thin module per subcommand in `commands/`."""
