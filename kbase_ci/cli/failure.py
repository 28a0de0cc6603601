"""How a failed command tells its caller: one line on stderr, always, and the same error
as JSON on stdout when the command's JSON form was asked (`--format json`), so an agent
that reads stdout gets a JSON answer whatever the exit code (docs/json-schema.md,
"Errors"). The exit code itself is decided in `cli.main.EXIT_CODES`, not here."""

from __future__ import annotations

import json
import sys

from kbase_ci.errors import error_json


def print_json_error(kind: str, exit_code: int, message: str,
                     exc: BaseException | None = None, hint: str | None = None) -> None:
    # ensure_ascii: a message may quote any file name; JSON escapes keep stdout one line.
    sys.stdout.write(json.dumps(error_json(kind, message, exit_code=exit_code, exc=exc,
                                           hint=hint)) + "\n")
    sys.stdout.flush()
