"""The `kbase` command line: `main` (argparse, dispatch, the one place errors become exit
codes), the query commands made from the query registry (`queryargs`: their parsers,
`queryrun`: running one and printing its answer), and one thin module per other
subcommand in `commands/`."""
