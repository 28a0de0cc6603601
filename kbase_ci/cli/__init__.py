"""The `kbase` command line: `main` (running a command, the one place errors become exit
codes), `commandline` (the commands, which one argv names, the argparse parser), the query
commands made from the query registry (`queryargs`: their parsers, `queryrun`: running
one and printing its answer), and one thin module per other subcommand in `commands/`."""
