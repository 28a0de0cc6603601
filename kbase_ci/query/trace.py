"""What a query did and how long it may take: `KBASE_LOG=debug` tracing and deadlines.

Tracing goes through the standard `logging` logger `kbase` at DEBUG level, so the core
never prints: the CLI and the MCP server attach a stderr handler when `KBASE_LOG=debug`
is set (`enable_from_env`). Each line says how long after the query began it happened,
the event, and its fields: `kbase: debug: 12.3 ms explore visit path=a.md depth=1 via=b.md`.

A `Deadline` is a query's time limit (`--timeout SECONDS`): loops ask `expired()` and stop
early, and the answer then says `partial: true` with the reason, instead of running on.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging

ENV = "KBASE_LOG"
NAME = "kbase"
"""The logger's name."""


def _logger() -> logging.Logger:
    # `logging` costs every query ~8 ms to import; it is imported only when tracing is
    # asked for, or already loaded by someone who may have configured the logger.
    import logging

    return logging.getLogger(NAME)


def enable_from_env() -> bool:
    """Send `kbase` debug records to stderr when `KBASE_LOG=debug` (once per process)."""
    if os.environ.get(ENV, "").strip().lower() != "debug":
        return False
    import logging

    logger = _logger()
    if not any(getattr(h, "_kbase", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("kbase: debug: %(message)s"))
        handler._kbase = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        logger.propagate = False  # other libraries' debug logging stays where it was
    return True


def _value(v: Any) -> str:
    text = str(v)
    return repr(text) if (" " in text or not text) else text


class Trace:
    """One query's trace (state: when it began). Calls cost one level check when
    tracing is off."""

    def __init__(self, query: str) -> None:
        self.query = query
        self.start = time.perf_counter()
        # Without `logging` loaded nobody can have enabled the logger: tracing is off.
        self.on = "logging" in sys.modules and _logger().isEnabledFor(10)  # DEBUG

    def __call__(self, event: str, **fields: Any) -> None:
        if not self.on:
            return
        ms = (time.perf_counter() - self.start) * 1000
        _logger().debug("%8.1f ms %s %s %s", ms, self.query, event,
                     " ".join(f"{k}={_value(v)}" for k, v in fields.items()))


class Deadline:
    """A time limit in seconds (None: none). State: when it ends."""

    def __init__(self, seconds: float | None) -> None:
        if seconds is not None and seconds <= 0:
            from kbase_ci.errors import UsageError  # only a bad value pays this import

            raise UsageError(f"--timeout must be more than 0 seconds, not {seconds:g}")
        self.seconds = seconds
        self.end = None if seconds is None else time.monotonic() + seconds
        self.hit = False

    def expired(self) -> bool:
        """True once the time is up (and from then on)."""
        if self.end is not None and not self.hit and time.monotonic() >= self.end:
            self.hit = True
        return self.hit

    def reason(self, done: str) -> str:
        return f"stopped after the {self.seconds:g} s time limit: {done}"


NO_DEADLINE = Deadline(None)
