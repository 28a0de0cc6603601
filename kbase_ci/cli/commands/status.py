"""`kbase status`: where the query index comes from, how stale it is, sizes, model."""

from __future__ import annotations

import argparse
from typing import Any

from kbase_ci.cli.commands.queryargs import add_common, emit, open_view
from kbase_ci.errors import EXIT_OK


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "status", help="the query index: origin, staleness, sizes, model")
    add_common(p)


def run(args: argparse.Namespace) -> int:
    # Lazy: `kbase --help` builds every command's parser; the library loads on use.
    from kbase_ci.query.status import status_answer

    emit(args, status_answer(open_view(args)), _lines)
    return EXIT_OK


def _lines(answer: dict[str, Any]) -> list[str]:
    src, fr = answer["source"], answer["freshness"]
    return [
        f"index: {src['origin']} {src['location']}".rstrip(),
        f"source commit: {answer['index']['source_commit']}  built {answer['index']['built_at']}",
        f"notes: {answer['counts'].get('notes')}  chunks: {answer['counts'].get('chunks')}  "
        f"bytes: {answer['bytes']}",
        f"model: {answer['model']['id']} ({answer['model']['reason'] or 'vectors'})",
        f"stale: {len(fr['changed'])} changed, {len(fr['added'])} added, "
        f"{len(fr['deleted'])} deleted"]
