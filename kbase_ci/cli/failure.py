"""How a failed command tells its caller: one line on stderr, always, and the same error
as JSON on stdout when the command's JSON form was asked (`--format json`), so an agent
that reads stdout gets a JSON answer whatever the exit code (docs/json-schema.md,
"Errors"). The exit code itself is decided in `cli.main.EXIT_CODES`, not here."""

from __future__ import annotations

import json
import sys
from typing import Any


def error_json(kind: str, exit_code: int, message: str, exc: BaseException | None = None,
               hint: str | None = None) -> dict[str, Any]:
    """`{"error": {kind, exit_code, message}}`, with `hint` (what to try) when there is
    one, and `path`, `line` and `col` when the error names a place (a `.kbase.yml` key)."""
    body: dict[str, Any] = {"kind": kind, "exit_code": exit_code, "message": message}
    if hint is not None:
        body["hint"] = hint
    for key in ("path", "line", "col"):
        value = getattr(exc, key, None)
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            body[key] = value
    return {"error": body}


def print_json_error(kind: str, exit_code: int, message: str,
                     exc: BaseException | None = None, hint: str | None = None) -> None:
    # ensure_ascii: a message may quote any file name; JSON escapes keep stdout one line.
    sys.stdout.write(json.dumps(error_json(kind, exit_code, message, exc, hint)) + "\n")
    sys.stdout.flush()
