"""One module per `kbase` subcommand: `add_parser(subparsers)` and `run(args) -> int`."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..vault import Vault, find_root


def open_vault(args: argparse.Namespace, *, staged: bool = False) -> Vault:
    root: Path = args.root if args.root is not None else find_root()
    return Vault(root, staged=staged, config_path=args.config)
